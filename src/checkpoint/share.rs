//! Checkpoints of the workers of a partitioned search (the ranks of an MPI
//! job), each of which holds only its share of a class; one process's
//! checkpoint is the share of the one worker, read and written by the same
//! code here.
//!
//! Each worker saves its own share into its own database directory (a
//! shared one on a cluster) as `.VARIANT.CLASS.rank-R-of-N.checkpoint`:
//! the file of one process's checkpoint, of its own positions and blocks,
//! whose header also names the share ([`ShareHeader`]), with its own
//! count of each layer, which its table must hold exactly
//! ([`check`](super::check)). The header's `found` counts the whole class:
//! whether the shares add up to it is for the workers to check together
//! before they resume ([`search`](crate::solver::search)).
//!
//! Worker 0 decides when every worker saves (the same interval and test
//! hook as one process). A solve by `N` workers refuses to start while the
//! directory holds shares saved by a job of another size, and says how to
//! resume them or discard them (`--restart`).

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::rank_files::{ShareHeader, aside_path, rank_files, rank_path};
use super::refusal::Refusal;
use super::{
    CheckpointOptions, Checkpointer, FORMAT, Header, MAGIC, SEAL, byte_sums, check, check_file, pack_summary,
    payload_checksum, read_words, seal, sealed_of, sealed_segments, sealed_words, summary_words, table_bytes,
    word_sums, write_table,
};
use crate::board::Class;
use crate::cleanup::Pending;
use crate::error::{Error, Result};
use crate::files::{self, Links, OpenError};
use crate::mod3::code_words;
use crate::solver::summary::NEXT;
use crate::solver::{
    Coding, LayerHardest, SEAL_WORDS, Save, ShareCheckpoints, Snapshot, SnapshotRef, Stored, StoredRef, Wanted,
};
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
        for class in variant.class_list() {
            let file = rank_path(dir, variant.name(), class, rank, ranks);
            check_file(&file)?;
            check_file(&aside_path(&file))?;
        }
        let mut checkpointer = Checkpointer::new(dir, variant, options, note);
        checkpointer.share = Some((rank, ranks));
        Ok(checkpointer)
    }

    /// Reads and checks this worker's checkpoint `file` of the share
    /// `wanted`: what a resume takes from it, or what is wrong with it.
    fn read_snapshot(&self, file: &Path, wanted: &Wanted<'_>) -> std::result::Result<(Header, Snapshot), Refusal> {
        let len = wanted.range.end - wanted.range.start;
        let (header, head, size, mut reader) = self.open(file, wanted.class, len, wanted.coding.method())?;
        // A whole class's checkpoint (which `open` gives only a whole
        // class's search) is the share of the one worker.
        let (first, own) = header
            .share
            .as_ref()
            .map_or((0, &header.found), |s| (s.first, &s.found));
        if first != wanted.range.start {
            return Err(Refusal::OtherRange {
                found: first,
                want: wanted.range.start,
            });
        }
        let blocks = wanted.blocks.end - wanted.blocks.start;
        match (header.on_disk, wanted.on_disk) {
            (Some(found), Some(want)) if found != want => {
                return Err(Refusal::Inconsistent(format!(
                    "keeps its table on disk in segments of {found} positions, not {want}: it resumes with the --max-memory it was solved with"
                )));
            }
            (Some(_), None) => return Err(Refusal::inconsistent("is of a table kept on disk, not in memory")),
            (None, Some(_)) => return Err(Refusal::inconsistent("is of a table kept in memory, not on disk")),
            _ => {}
        }
        let seal_words = match header.on_disk {
            Some(segment) => {
                sealed_segments(len, segment).ok_or_else(|| Refusal::inconsistent("has segments of no whole word"))?
                    * SEAL_WORDS as u64
            }
            None => 0,
        };
        let table = match header.on_disk {
            Some(_) => 8 * seal_words,
            None => table_bytes(wanted.coding, len),
        };
        let want = table + 8 * summary_words(blocks);
        let bytes = size.saturating_sub(head);
        if bytes != want {
            return Err(Refusal::Length { bytes, want });
        }
        if header.found.is_empty() || header.found.len() > wanted.coding.most_layers() {
            return Err(Refusal::Inconsistent(format!("has {} layers", header.found.len())));
        }
        let table = match (header.on_disk, wanted.coding) {
            (Some(segment), _) => Stored::Sealed(sealed_of(&read_words(&mut reader, seal_words as usize)?, segment)),
            (None, Coding::Bytes) => {
                let mut cells = vec![0u8; len as usize];
                reader.read_exact(&mut cells)?;
                Stored::Bytes(cells)
            }
            (None, Coding::TwoBit) => Stored::TwoBit(read_words(&mut reader, code_words(len) as usize)?),
        };
        let packed = read_words(&mut reader, summary_words(blocks) as usize)?;
        let hardest = LayerHardest {
            own: header.hardest.clone(),
            mirrored: header.mirrored_hardest.clone(),
        };
        let sums = match &table {
            Stored::Bytes(cells) => (byte_sums(cells), len),
            Stored::TwoBit(words) => (word_sums(words, |&w| w), 8 * words.len() as u64),
            Stored::Sealed(sealed) => {
                let words: Vec<u64> = sealed_words(sealed).collect();
                (word_sums(&words, |&w| w), 8 * words.len() as u64)
            }
        };
        if format!("{:016x}", payload_checksum(sums, &packed, &hardest)) != header.checksum {
            return Err(Refusal::Checksum);
        }
        let mut summary: Vec<u8> = packed.iter().flat_map(|w| w.to_le_bytes()).collect();
        if summary.drain(blocks as usize..).any(|b| b != 0) {
            return Err(Refusal::inconsistent("has summary padding that is not zero"));
        }
        let snapshot = Snapshot {
            found: header.found.clone(),
            own: own.clone(),
            done: header.done,
            table,
            summary,
            hardest,
            watched: header.watched.clone(),
        };
        check(&snapshot, wanted)?;
        Ok((header, snapshot))
    }
}

impl ShareCheckpoints for Checkpointer<'_> {
    fn resume(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot> {
        let file = Some(self.file(wanted.class)).filter(|file| !self.options.restart && file.exists())?;
        let class = wanted.class.name();
        match self.read_snapshot(&file, wanted) {
            Ok((header, snapshot)) => {
                let age = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
                    .saturating_sub(header.written);
                let over = if header.done {
                    " (the class's search is over)"
                } else {
                    ""
                };
                (self.note)(&format!(
                    "resuming {} class {class} from the checkpoint {} at layer {}{over}, written {age} s ago",
                    self.variant.name(),
                    crate::text::path(&file),
                    header.found.len() - 1,
                ));
                Some(snapshot)
            }
            Err(problem) => {
                let why = format!("checkpoint {} {problem}", crate::text::path(&file));
                self.refuse(
                    wanted.class,
                    why,
                    &format!("ignoring it and searching class {class} from the start"),
                );
                None
            }
        }
    }

    /// Tells why, or holds it for [`start_over`](Self::start_over) when
    /// the refused checkpoint seals a search on disk.
    fn refused(&mut self, class: Class, why: &str) {
        let why = format!("the checkpoint of class {} {why}", class.name());
        self.refuse(class, why, "the search starts over");
    }

    /// Refuses to start a search of `class` over while a checkpoint of it
    /// was not resumed and the table's file it seals is there: that file holds a
    /// search on disk, hours of it on a large board, and a search that
    /// starts over replaces it. `--restart` removed both before the search
    /// began.
    fn start_over(&mut self, class: Class) -> Result<()> {
        let refused = self.refused.take();
        let Some(codes) = self.seals_on_disk(class) else {
            return Ok(());
        };
        let why = refused.unwrap_or_else(|| {
            format!(
                "checkpoint {} does not fit this search",
                crate::text::path(&self.file(class))
            )
        });
        Err(Error::Usage(format!(
            "{why}; the search of {} class {} it seals, kept on disk in {}, is not thrown away: \
             resume it with the bishops and the --max-memory that saved it, or add --restart to search from the start",
            self.variant.name(),
            class.name(),
            crate::text::path(&codes),
        )))
    }

    /// The share this worker wrote aside at its job's last save, if it is
    /// there and passes every check a checkpoint passes; nothing for one
    /// process, whose checkpoint takes its place alone.
    fn resume_aside(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot> {
        self.share?;
        let file = aside_path(&self.file(wanted.class));
        if self.options.restart || !file.exists() {
            return None;
        }
        let class = wanted.class.name();
        match self.read_snapshot(&file, wanted) {
            Ok((header, snapshot)) => {
                let age = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
                    .saturating_sub(header.written);
                (self.note)(&format!(
                    "resuming {} class {class} from its share {} at layer {}, written {age} s ago \
                     and not yet in its checkpoint's place when the job ended",
                    self.variant.name(),
                    crate::text::path(&file),
                    header.found.len() - 1,
                ));
                self.offered_aside = true;
                Some(snapshot)
            }
            Err(problem) => {
                (self.note)(&format!("share {} {problem}; ignoring it", crate::text::path(&file)));
                None
            }
        }
    }

    /// Puts the share written aside in the checkpoint's place when the
    /// workers resume from it; removes it otherwise, saying so when it was
    /// offered.
    fn resumed(&mut self, class: Class, aside: bool) -> Result<()> {
        let file = self.file(class);
        let written = aside_path(&file);
        if aside {
            fs::rename(&written, &file).map_err(|e| Error::Io(file.clone(), e))?;
            files::sync_dir(&self.dir);
        } else if self.share.is_some() && fs::remove_file(&written).is_ok() && self.offered_aside {
            (self.note)(&format!(
                "removed its share {}: the other ranks have none of its layer",
                crate::text::path(&written)
            ));
        }
        self.offered_aside = false;
        Ok(())
    }

    /// Marks inside a layer as often as checkpoints are saved.
    fn marks(&self) -> Option<std::time::Duration> {
        Some(self.options.interval)
    }

    /// Saves when the interval has passed since the last save (which this
    /// then counts from), or saves and stops when the test hook or a stop
    /// asked for ([`stop`](crate::stop)) says so.
    fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save {
        let depth = u16::try_from(found.len().saturating_sub(1)).unwrap_or(u16::MAX);
        let hook = !done
            && self
                .options
                .stop_after
                .is_some_and(|(c, layer)| layer == depth && c.is_none_or(|c| c == class));
        if hook || crate::stop::asked() {
            self.last = Instant::now();
            Save::AndStop
        } else if self.last.elapsed() >= self.options.interval {
            self.last = Instant::now();
            Save::Yes
        } else {
            Save::No
        }
    }

    /// Writes this worker's share beside its checkpoint, synced, to take
    /// its place at [`commit`](Self::commit) ([`checkpoint`](super)); a
    /// whole class's checkpoint when this is not a worker's checkpointer.
    /// No thread writes its table or summary meanwhile.
    ///
    /// A worker's share is written to [`aside_path`] and kept there once
    /// synced, even if the process is interrupted before the commit: the
    /// workers cannot all rename at one instant, and a job that ends
    /// between the first rename and the last leaves some checkpoints a
    /// layer ahead, which the others' shares aside then match
    /// ([`resume_aside`](Self::resume_aside)). One process's is written
    /// to a temporary file removed if it is interrupted.
    fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
        debug_assert!(snapshot.summary.iter().all(|s| s.load(Ordering::Relaxed) & NEXT == 0));
        self.savable(&snapshot)?;
        let range = &snapshot.range;
        let summary = pack_summary(
            snapshot.summary.iter().map(|s| s.load(Ordering::Relaxed)),
            snapshot.summary.len() as u64,
        );
        let (sums, bytes) = match snapshot.table {
            StoredRef::Bytes(cells) => (byte_sums(cells), cells.len() as u64),
            StoredRef::TwoBit(words) => (word_sums(words, |w| w.load(Ordering::Relaxed)), 8 * words.len() as u64),
            StoredRef::Sealed(sealed) => {
                let words: Vec<u64> = sealed_words(sealed).collect();
                (word_sums(&words, |&w| w), 8 * words.len() as u64)
            }
        };
        let checksum = payload_checksum((sums, bytes), &summary, snapshot.hardest);
        let header = Header {
            format: FORMAT,
            variant: self.variant.name().to_owned(),
            start: self.start.clone(),
            holes: super::holes(self.variant),
            class: snapshot.class.index(),
            method: snapshot.table.coding().method().to_owned(),
            length: range.end - range.start,
            found: snapshot.found.to_vec(),
            done: snapshot.done,
            checksum: format!("{checksum:016x}"),
            written: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            hardest: snapshot.hardest.own.clone(),
            mirrored_hardest: snapshot.hardest.mirrored.clone(),
            watched: snapshot.watched.to_vec(),
            on_disk: match snapshot.table {
                StoredRef::Sealed(sealed) => Some(sealed.segment_positions),
                _ => None,
            },
            share: self.share.map(|(rank, ranks)| ShareHeader {
                rank,
                ranks,
                first: range.start,
                found: snapshot.own.to_vec(),
            }),
        };
        let began = Instant::now();
        let file = self.file(snapshot.class);
        let name = file.file_name().expect("a checkpoint file name").to_string_lossy();
        let tmp = match self.share {
            Some(_) => aside_path(&file),
            None => self.dir.join(format!("{name}.tmp-{}", std::process::id())),
        };
        let json = serde_json::to_vec(&header).expect("a header serialises");
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&json);
        head.extend_from_slice(format!("\n{SEAL}{}\n", seal(&json)).as_bytes());
        check_file(&file)?;
        check_file(&tmp)?;
        self.abandon(snapshot.class);
        let pending = Pending::register(&tmp);
        let result = (|| {
            fs::create_dir_all(&self.dir)?;
            let mut out = files::open_regular(
                &tmp,
                fs::OpenOptions::new().write(true).create(true).truncate(true),
                Links::Refuse,
            )
            .map_err(|e| match e {
                OpenError::NotRegular(kind) => std::io::Error::other(format!("{} is {kind}", crate::text::path(&tmp))),
                OpenError::Io(e) => e,
            })?;
            out.write_all(&head)?;
            write_table(&mut out, snapshot.table)?;
            let summary_bytes: Vec<u8> = summary.iter().flat_map(|w| w.to_le_bytes()).collect();
            out.write_all(&summary_bytes)?;
            out.sync_all()
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(Error::Io(file, e));
        }
        // A worker's share, whole and synced, outlives an interruption.
        let pending = if self.share.is_some() {
            drop(pending);
            None
        } else {
            Some(pending)
        };
        self.aside = Some((tmp, file, pending));
        self.written.0 += 1;
        self.written.1 += began.elapsed().as_secs_f64();
        self.written.2 += head.len() as u64 + bytes + 8 * summary.len() as u64;
        Ok(())
    }

    /// Puts the share written aside in its checkpoint's place, atomically
    /// (a rename, then the directory synced).
    fn commit(&mut self, _class: Class) -> Result<()> {
        let Some((tmp, file, _pending)) = self.aside.take() else {
            return Ok(());
        };
        if let Err(e) = fs::rename(&tmp, &file) {
            let _ = fs::remove_file(&tmp);
            return Err(Error::Io(file, e));
        }
        // Make the rename itself durable.
        files::sync_dir(&self.dir);
        Ok(())
    }

    fn abandon(&mut self, _class: Class) {
        if let Some((tmp, _, _pending)) = self.aside.take() {
            let _ = fs::remove_file(&tmp);
        }
    }

    fn stopped(&mut self, class: Class, found: &[u64]) -> Error {
        let (layer, name) = (found.len().saturating_sub(1), class.name());
        // A rank the signal did not reach stops with the rank that heard it.
        let why = match self.options.stop_after.is_some() && !crate::stop::asked() {
            true => "as BISHOPS_STOP_AFTER_LAYER asks",
            false => "as asked (SIGUSR1)",
        };
        match self.share {
            // Every rank says so, and the job's errors name no variant.
            Some(_) => Error::Stopped(format!(
                "stopped after layer {layer} of class {name}, {why}; every rank's checkpoint holds its share"
            )),
            None => Error::Stopped(format!(
                "stopped after layer {layer} of {} class {name}, {why}; the checkpoint {} holds the search, \
                 and the same command goes on from it",
                self.variant.name(),
                crate::text::path(&self.file(class)),
            )),
        }
    }

    /// A checkpointer saves, so its search stops at a save point when asked.
    fn stops_when_asked(&self) -> bool {
        true
    }

    fn note(&mut self, text: &str) {
        (self.note)(text);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::checkpoint::tests::whole;
    use crate::checkpoint::{MAGIC, path};

    /// An empty directory of its own for test `name`.
    fn fresh(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bishops-share-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A test's wrapper of a worker's [`Checkpointer`]: the checkpoints
    /// pass every call through to it but the saves and commits the wrapper
    /// changes.
    trait Wrapper<'a> {
        fn inner(&mut self) -> &mut Checkpointer<'a>;

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            self.inner().save(snapshot)
        }

        fn commit(&mut self, class: Class) -> Result<()> {
            self.inner().commit(class)
        }
    }

    impl<'a, W: Wrapper<'a>> ShareCheckpoints for W {
        fn resume(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot> {
            self.inner().resume(wanted)
        }

        fn resume_aside(&mut self, wanted: &Wanted<'_>) -> Option<Snapshot> {
            self.inner().resume_aside(wanted)
        }

        fn resumed(&mut self, class: Class, aside: bool) -> Result<()> {
            self.inner().resumed(class, aside)
        }

        fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save {
            self.inner().due(class, found, done)
        }

        fn marks(&self) -> Option<std::time::Duration> {
            None
        }

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            Wrapper::save(self, snapshot)
        }

        fn commit(&mut self, class: Class) -> Result<()> {
            Wrapper::commit(self, class)
        }

        fn abandon(&mut self, class: Class) {
            self.inner().abandon(class);
        }

        fn note(&mut self, text: &str) {
            self.inner().note(text);
        }

        fn refused(&mut self, class: Class, why: &str) {
            self.inner().refused(class, why);
        }

        fn start_over(&mut self, class: Class) -> Result<()> {
            self.inner().start_over(class)
        }

        fn stopped(&mut self, class: Class, found: &[u64]) -> Error {
            self.inner().stopped(class, found)
        }
    }

    /// A worker's checkpoints that read every share back as soon as they
    /// save it: it must pass every check and be what was saved.
    struct ReadBack<'a, 'b> {
        inner: Checkpointer<'a>,
        wanted: Wanted<'b>,
        read: usize,
        saved: Option<Snapshot>,
    }

    impl<'a> Wrapper<'a> for ReadBack<'a, '_> {
        fn inner(&mut self) -> &mut Checkpointer<'a> {
            &mut self.inner
        }

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            self.saved = Some(snapshot.to_owned());
            self.inner.save(snapshot)
        }

        fn commit(&mut self, class: Class) -> Result<()> {
            self.inner.commit(class)?;
            let (saved, file) = (self.saved.take().expect("a share saved"), self.inner.file(class));
            let (_, read) = self
                .inner
                .read_snapshot(&file, &self.wanted)
                .unwrap_or_else(|e| panic!("{} {e}", file.display()));
            assert!(read == saved, "{}: not what was saved", file.display());
            self.read += 1;
            Ok(())
        }
    }

    /// Class 0 of `name` searched into a table of `coding` with `workers`
    /// threads, each saving its share into `dir` as `options` asks (reading
    /// each back at once) and resuming from there: each worker's result,
    /// notes and the shares it read back.
    fn workers(
        coding: Coding,
        dir: &Path,
        name: &str,
        workers: usize,
        options: CheckpointOptions,
    ) -> Vec<(Result<()>, Vec<String>, usize)> {
        let variant = Variant::named(name).unwrap();
        crate::solver::search::saving_in(coding, name, workers, |me, wanted, note, search| {
            let inner = Checkpointer::for_rank(dir, &variant, options, note, me, workers).unwrap();
            let mut checkpoints = ReadBack {
                inner,
                wanted: wanted.clone(),
                read: 0,
                saved: None,
            };
            search(&mut checkpoints);
            checkpoints.read
        })
    }

    const EVERY_LAYER: CheckpointOptions = CheckpointOptions {
        interval: std::time::Duration::ZERO,
        stop_after: None,
        stop_fold_after: None,
        fold_step_words: None,
        write: crate::storage::Resumable::DEFAULT,
        restart: false,
    };

    /// Every share saved at every boundary, of either table, with a
    /// mirrored class (9x6) or not (7x6), reads back as it was saved and
    /// passes its checks.
    #[test]
    fn every_share_reads_back_as_saved() {
        for coding in [Coding::Bytes, Coding::TwoBit] {
            for name in ["7x6", "9x6"] {
                let dir = fresh(&format!("every-{name}-{}", coding.method()));
                for (result, notes, read) in workers(coding, &dir, name, 3, EVERY_LAYER) {
                    result.unwrap();
                    assert!(notes.is_empty(), "{notes:?}");
                    assert!(read > 10, "{name}: {read} shares read back");
                }
                fs::remove_dir_all(&dir).unwrap();
            }
        }
    }

    /// Checkpoints whose save fails the `fail`th time (a full disk).
    struct Failing<'a> {
        inner: Checkpointer<'a>,
        saves: usize,
        fail: usize,
    }

    impl<'a> Wrapper<'a> for Failing<'a> {
        fn inner(&mut self) -> &mut Checkpointer<'a> {
            &mut self.inner
        }

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            self.saves += 1;
            if self.saves == self.fail {
                let file = self.inner.file(snapshot.class);
                return Err(Error::Io(file, std::io::Error::other("no space left (a test's)")));
            }
            self.inner.save(snapshot)
        }
    }

    /// Two workers of 7x6 by `coding` resumed from `dir`, through
    /// checkpoints that pass every save on: each must say it resumed once,
    /// at layer `layer`.
    fn both_resume_at(coding: Coding, dir: &Path, layer: usize) {
        let (variant, method) = (Variant::named("7x6").unwrap(), coding.method());
        let results = crate::solver::search::saving_in(coding, "7x6", 2, |me, _, note, search| {
            let inner = Checkpointer::for_rank(dir, &variant, EVERY_LAYER, note, me, 2).unwrap();
            search(&mut Failing {
                inner,
                saves: 0,
                fail: usize::MAX,
            });
        });
        let at = format!("at layer {layer},");
        for (result, notes, ()) in results {
            assert!(result.is_ok(), "{method}: {result:?}");
            let resumed: Vec<_> = notes
                .iter()
                .filter(|n| n.starts_with("resuming 7x6 class a1"))
                .collect();
            assert!(resumed.len() == 1 && resumed[0].contains(&at), "{method}: {notes:?}");
        }
    }

    /// When one worker cannot save its share, no worker's checkpoint moves
    /// on: the failing worker stops with its error, the others name it,
    /// and every worker resumes from the layer all saved before.
    #[test]
    fn a_share_that_cannot_be_saved_keeps_every_worker_at_the_layer_before() {
        for coding in [Coding::Bytes, Coding::TwoBit] {
            let method = coding.method();
            let dir = fresh(&format!("unsaved-{method}"));
            let variant = Variant::named("7x6").unwrap();
            let run = |fail: usize| {
                crate::solver::search::saving_in(coding, "7x6", 2, |me, _, note, search| {
                    let inner = Checkpointer::for_rank(&dir, &variant, EVERY_LAYER, note, me, 2).unwrap();
                    let fail = if me == 1 { fail } else { usize::MAX };
                    search(&mut Failing { inner, saves: 0, fail });
                })
            };
            let results = run(4);
            assert!(
                matches!(&results[1].0, Err(Error::Io(..))),
                "{method}: {:?}",
                results[1].0
            );
            match &results[0].0 {
                Err(Error::Exchange(e)) => assert!(e.contains("worker 1 could not save"), "{method}: {e}"),
                other => panic!("{method}: {other:?}"),
            }
            let leftovers: Vec<_> = (fs::read_dir(&dir).unwrap().flatten())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains(".tmp-") || name.ends_with(".aside"))
                .collect();
            assert!(leftovers.is_empty(), "{method}: {leftovers:?}");
            // Both resume from the third save, after layer 3.
            both_resume_at(coding, &dir, 3);
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// Checkpoints whose `spoil`th save is handed a state no resume would
    /// take: one hardest candidate too many, kept twice (the fault a list
    /// of a layer's lowest once had), or, with `recount`, its newest
    /// layer's own count set to `recount(own, class's)`.
    struct Spoiling<'a> {
        inner: Checkpointer<'a>,
        saves: usize,
        spoil: usize,
        recount: Option<fn(u64, u64) -> u64>,
    }

    impl<'a> Wrapper<'a> for Spoiling<'a> {
        fn inner(&mut self) -> &mut Checkpointer<'a> {
            &mut self.inner
        }

        fn save(&mut self, snapshot: SnapshotRef<'_>) -> Result<()> {
            self.saves += 1;
            if self.saves != self.spoil {
                return self.inner.save(snapshot);
            }
            if let Some(recount) = self.recount {
                let mut own = snapshot.own.to_vec();
                let (mine, class) = (own.last_mut().unwrap(), *snapshot.found.last().unwrap());
                *mine = recount(*mine, class);
                return self.inner.save(SnapshotRef { own: &own, ..snapshot });
            }
            let mut hardest = snapshot.hardest.clone();
            hardest.own.push(hardest.own.last().copied().unwrap_or(0));
            self.inner.save(SnapshotRef {
                hardest: &hardest,
                ..snapshot
            })
        }
    }

    /// A save checks the state it is given before it writes: a state no
    /// resume would take stops the search and leaves the checkpoint of the
    /// layer before, which both workers then resume.
    #[test]
    fn a_state_no_resume_would_take_is_not_saved() {
        for coding in [Coding::Bytes, Coding::TwoBit] {
            let method = coding.method();
            let dir = fresh(&format!("unsavable-{method}"));
            let variant = Variant::named("7x6").unwrap();
            let run = |spoil: usize| {
                crate::solver::search::saving_in(coding, "7x6", 2, |me, _, note, search| {
                    let inner = Checkpointer::for_rank(&dir, &variant, EVERY_LAYER, note, me, 2).unwrap();
                    let spoil = if me == 1 { spoil } else { usize::MAX };
                    search(&mut Spoiling {
                        inner,
                        saves: 0,
                        spoil,
                        recount: None,
                    });
                })
            };
            let results = run(4);
            match &results[1].0 {
                Err(Error::Mismatch(e)) => assert!(
                    e.contains("class a1 after layer 4 keeps ") && e.contains("its checkpoint is not saved"),
                    "{method}: {e}"
                ),
                other => panic!("{method}: {other:?}"),
            }
            both_resume_at(coding, &dir, 3);
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// A save refuses a state whose own count of a layer is more than the
    /// class's, or, for a whole class, not the class's: what a search
    /// that counted some positions twice would hand it (its claims of
    /// spooled images once could), and what a resume would refuse.
    #[test]
    fn a_state_that_miscounts_its_layer_is_not_saved() {
        let variant = Variant::named("7x6").unwrap();
        let spoiled = |dir: &Path, workers: usize, recount: fn(u64, u64) -> u64| {
            crate::solver::search::saving_in(Coding::TwoBit, "7x6", workers, |me, _, note, search| {
                let inner = match workers {
                    1 => Checkpointer::new(dir, &variant, EVERY_LAYER, note),
                    _ => Checkpointer::for_rank(dir, &variant, EVERY_LAYER, note, me, workers).unwrap(),
                };
                let spoil = if me + 1 == workers { 4 } else { usize::MAX };
                search(&mut Spoiling {
                    inner,
                    saves: 0,
                    spoil,
                    recount: Some(recount),
                });
            })
        };
        let refused = |result: &Result<()>, what: &str| match result {
            Err(Error::Mismatch(e)) => assert!(
                e.contains("class a1 after layer 4 counts ")
                    && e.contains("positions of its own in layer 4, of the class's")
                    && e.contains("its checkpoint is not saved"),
                "{what}: {e}"
            ),
            other => panic!("{what}: {other:?}"),
        };
        let twice: fn(u64, u64) -> u64 = |own, _| 2 * own;
        let over: fn(u64, u64) -> u64 = |_, class| class + 1;
        let dir = fresh("miscounted-whole");
        refused(&spoiled(&dir, 1, twice)[0].0, "a whole class counting twice");
        fs::remove_dir_all(&dir).unwrap();
        let dir = fresh("miscounted-share");
        refused(&spoiled(&dir, 2, over)[1].0, "a share counting past its class");
        both_resume_at(Coding::TwoBit, &dir, 3);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Checkpoints of a job that ends at its `crash`th commit, as when a
    /// rank is lost between the workers' writes of a save and their
    /// renames: this worker renames its share first if `rename`, and its
    /// share aside is cut short if `cut` (its write did not finish).
    struct Crashing<'a> {
        inner: Checkpointer<'a>,
        commits: usize,
        crash: usize,
        rename: bool,
        cut: bool,
    }

    impl<'a> Wrapper<'a> for Crashing<'a> {
        fn inner(&mut self) -> &mut Checkpointer<'a> {
            &mut self.inner
        }

        fn commit(&mut self, class: Class) -> Result<()> {
            self.commits += 1;
            if self.commits < self.crash {
                return self.inner.commit(class);
            }
            let aside = aside_path(&self.inner.file(class));
            if self.rename {
                self.inner.commit(class)?;
            } else if self.cut {
                let bytes = fs::read(&aside).unwrap();
                fs::write(&aside, &bytes[..bytes.len() / 2]).unwrap();
            }
            Err(Error::Stopped("the job ended (a test's)".into()))
        }
    }

    /// A job that ends after its workers wrote their shares of a save and
    /// before all of them renamed theirs resumes that save's layer, from
    /// checkpoints and shares aside alike; when one worker's share aside
    /// was cut short, every worker resumes from its checkpoint, a layer
    /// before, and the shares aside are removed.
    #[test]
    fn a_job_that_ended_between_the_renames_resumes_the_layer_all_wrote() {
        // Whether each worker renames, whether its share aside is cut
        // short, and the layer both resume.
        let cases = [
            ([true, false], [false, false], 4),
            ([false, false], [false, false], 4),
            ([false, false], [true, false], 3),
        ];
        for coding in [Coding::Bytes, Coding::TwoBit] {
            let method = coding.method();
            let variant = Variant::named("7x6").unwrap();
            for (k, (rename, cut, layer)) in cases.into_iter().enumerate() {
                let what = format!("{method}, case {k}");
                let dir = fresh(&format!("renames-{method}-{k}"));
                let crashed = crate::solver::search::saving_in(coding, "7x6", 2, |me, _, note, search| {
                    let inner = Checkpointer::for_rank(&dir, &variant, EVERY_LAYER, note, me, 2).unwrap();
                    search(&mut Crashing {
                        inner,
                        commits: 0,
                        crash: 4,
                        rename: rename[me],
                        cut: cut[me],
                    });
                });
                assert!(crashed.iter().all(|c| c.0.is_err()), "{what}");
                let asides = || {
                    (fs::read_dir(&dir).unwrap().flatten())
                        .filter(|e| e.file_name().to_string_lossy().ends_with(".aside"))
                        .count()
                };
                assert_eq!(asides(), rename.iter().filter(|r| !**r).count(), "{what}");
                for (me, (result, notes, _)) in workers(coding, &dir, "7x6", 2, EVERY_LAYER).iter().enumerate() {
                    assert!(result.is_ok(), "{what}: {result:?}");
                    let resumed: Vec<_> = notes
                        .iter()
                        .filter(|n| n.starts_with("resuming 7x6 class a1"))
                        .collect();
                    assert!(
                        resumed
                            .last()
                            .is_some_and(|n| n.contains(&format!("at layer {layer},"))),
                        "{what}, worker {me}: {notes:?}"
                    );
                    if cut[me] {
                        assert!(notes.iter().any(|n| n.contains("ignoring it")), "{what}: {notes:?}");
                    } else if cut.contains(&true) {
                        assert!(
                            notes.iter().any(|n| n.contains("removed its share")),
                            "{what}: {notes:?}"
                        );
                    }
                }
                assert_eq!(asides(), 0, "{what}");
                fs::remove_dir_all(&dir).unwrap();
            }
        }
    }

    /// A worker whose checkpoint is refused while another offers a share
    /// aside says so once: the second round of the agreement does not read
    /// it again.
    #[test]
    fn a_refused_checkpoint_is_read_once_when_the_workers_try_again() {
        let variant = Variant::named("7x6").unwrap();
        let coding = Coding::TwoBit;
        let dir = fresh("refused-once");
        crate::solver::search::saving_in(coding, "7x6", 2, |me, _, note, search| {
            let inner = Checkpointer::for_rank(&dir, &variant, EVERY_LAYER, note, me, 2).unwrap();
            search(&mut Crashing {
                inner,
                commits: 0,
                crash: 4,
                rename: me == 0,
                cut: false,
            });
        });
        // Worker 0 put its layer in place and worker 1 kept it aside; then
        // worker 0's checkpoint is damaged.
        let a1 = Class::from_index(0).unwrap();
        let file = rank_path(&dir, "7x6", a1, 0, 2);
        let mut bytes = fs::read(&file).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&file, &bytes).unwrap();
        let results = workers(coding, &dir, "7x6", 2, EVERY_LAYER);
        assert!(results.iter().all(|r| r.0.is_ok()), "{results:?}");
        let ignored = results[0].1.iter().filter(|n| n.contains("ignoring it")).count();
        assert_eq!(ignored, 1, "{:?}", results[0].1);
        assert!(
            results[0].1.iter().any(|n| n.starts_with("not resuming class a1")),
            "nothing to agree on, both start over: {results:?}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Shares of a stopped search, of either table, resume together; one
    /// that fails its checks, or is another worker's, is ignored with the
    /// reason, and then every worker starts over. A one-process solve does
    /// not take a share.
    #[test]
    fn a_share_that_fails_its_checks_is_ignored() {
        for coding in [Coding::Bytes, Coding::TwoBit] {
            let method = coding.method();
            let dir = fresh(&format!("spoiled-{method}"));
            let stop = CheckpointOptions {
                stop_after: Some((None, 6)),
                stop_fold_after: None,
                fold_step_words: None,
                ..EVERY_LAYER
            };
            let run = |options| workers(coding, &dir, "7x6", 2, options);
            let a1 = Class::from_index(0).unwrap();
            let file = rank_path(&dir, "7x6", a1, 1, 2);
            for result in run(stop) {
                assert!(matches!(result.0, Err(Error::Stopped(_))), "{:?}", result.0);
            }
            let saved = fs::read(&file).unwrap();
            let no_share = "not resuming class a1: rank 1 has no share";
            for (bytes, said) in spoils(&saved, coding) {
                fs::write(&file, &bytes).unwrap();
                let results = run(EVERY_LAYER);
                for (result, _, _) in &results {
                    assert!(result.is_ok(), "{method} {said}: {result:?}");
                }
                let (rank0, rank1) = (&results[0].1, &results[1].1);
                let ignored = |n: &String| n.contains(&said) && n.contains("ignoring it");
                assert!(rank1.iter().any(ignored), "{method} {said}: {rank1:?}");
                assert!(rank0.iter().any(|n| n.contains(no_share)), "{method} {said}: {rank0:?}");
                // The search went on to the end, and saved its shares again:
                // put back the stopped ones for the next spoil.
                assert!(rank_path(&dir, "7x6", a1, 0, 2).exists());
                run(CheckpointOptions { restart: true, ..stop });
            }
            // Unspoiled, both resume.
            fs::write(&file, &saved).unwrap();
            let results = run(EVERY_LAYER);
            for (result, notes, _) in &results {
                assert!(result.is_ok(), "{method}: {result:?}");
                let resumed = notes.iter().filter(|n| n.starts_with("resuming 7x6 class a1")).count();
                assert_eq!(resumed, 1, "{method}: {notes:?}");
            }
            // A one-process solve does not take a worker's share.
            fs::write(path(&dir, "7x6", a1), &saved).unwrap();
            let variant = Variant::named("7x6").unwrap();
            let index = variant.classes()[0].tight_index();
            let mut notes = Vec::new();
            let mut note = |n: &str| notes.push(n.to_owned());
            let mut whole_class = Checkpointer::new(&dir, &variant, CheckpointOptions::default(), &mut note);
            assert!(whole_class.resume(&whole(&index, coding)).is_none());
            drop(whole_class);
            assert!(notes[0].contains("is one worker's share"), "{method}");
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// The share file `saved` of worker 1 of 2 spoiled in ways a resume
    /// refuses, each with what the refusal says.
    fn spoils(saved: &[u8], coding: Coding) -> Vec<(Vec<u8>, String)> {
        let method = coding.method();
        let header_end = saved.iter().skip(MAGIC.len()).position(|&b| b == b'\n').unwrap() + MAGIC.len();
        let line = &saved[MAGIC.len()..header_end];
        let first = serde_json::from_slice::<Header>(line).unwrap().share.unwrap().first;
        // The header edited, and sealed again: these spoils are for the
        // checks past the seal.
        let edit = |change: &dyn Fn(&mut Header)| {
            let mut header: Header = serde_json::from_slice(line).unwrap();
            change(&mut header);
            let mut bytes = MAGIC.to_vec();
            bytes.extend(serde_json::to_vec(&header).unwrap());
            bytes.extend_from_slice(&saved[header_end..]);
            crate::checkpoint::reseal(&mut bytes);
            bytes
        };
        let last_code = saved.len() - 9;
        let mut flipped = saved.to_vec();
        flipped[last_code] ^= 0x01;
        let other = if coding == Coding::Bytes { "two-bit" } else { "tight" };
        vec![
            (flipped, "fails its checksum".into()),
            (saved[..saved.len() - 8].to_vec(), "bytes long".into()),
            // One more position of its own at remoteness 6 than it holds.
            (
                edit(&|h| *h.share.as_mut().unwrap().found.last_mut().unwrap() += 1),
                "holds other layers than its header counts".into(),
            ),
            (
                edit(&|h| h.watched.insert(0, Some(5))),
                "knows 5 watched positions, not 4".into(),
            ),
            (
                edit(&|h| h.share.as_mut().unwrap().rank = 0),
                "is the share of rank 0 of 2, not of rank 1 of 2".into(),
            ),
            (
                edit(&|h| h.share.as_mut().unwrap().first += 1),
                format!("starts at position {}, not {first}", first + 1),
            ),
            (
                edit(&|h| h.method = other.into()),
                format!("is for method {other}, not {method}"),
            ),
        ]
    }

    #[test]
    fn a_job_of_another_size_is_refused_until_restart() {
        let dir = fresh("other-size");
        let variant = Variant::named("5x4").unwrap();
        // Worker 1 of 3's share of class a1: a job of another size sees its name.
        let share = rank_path(&dir, "5x4", variant.classes()[0].class, 1, 3);
        let save = || fs::write(&share, b"bishops checkpoint\n").unwrap();
        save();
        let mut quiet = |_: &str| {};
        let e = Checkpointer::for_rank(&dir, &variant, CheckpointOptions::default(), &mut quiet, 0, 2)
            .err()
            .unwrap();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        let said = e.to_string();
        assert!(said.contains("mpirun -np 3") && said.contains("--restart"), "{e}");
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
        save();
        assert_eq!(rank_files(&dir, &variant).len(), 1);
        assert_eq!(crate::checkpoint::remove(&dir, &variant).len(), 1);
        assert!(rank_files(&dir, &variant).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
