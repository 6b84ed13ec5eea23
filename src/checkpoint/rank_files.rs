//! Where the workers of a partitioned search keep their checkpoints: the
//! file of each worker's share of a class, and what its header says of
//! the share ([`share`](super::share) saves and reads them).

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::Class;
use crate::variant::Variant;

/// What a checkpoint of one worker's share says of the share.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
pub struct ShareHeader {
    /// The worker (the MPI rank).
    pub rank: usize,
    /// How many workers the search has.
    pub ranks: usize,
    /// The tight index of the share's first cell.
    pub first: u64,
    /// `found[d]`: the share's own positions at remoteness `d`.
    pub found: Vec<u64>,
}

/// The checkpoint of worker `rank`'s share of class `class` of `variant`,
/// in a search by `ranks` workers.
///
/// ```
/// use bishops::Class;
/// use bishops::checkpoint::rank_path;
/// let file = rank_path("db".as_ref(), "9x8", Class::from_index(0).unwrap(), 1, 4);
/// assert_eq!(file, std::path::Path::new("db/.9x8.a1.rank-1-of-4.checkpoint"));
/// ```
pub fn rank_path(dir: &Path, variant: &str, class: Class, rank: usize, ranks: usize) -> PathBuf {
    dir.join(format!(".{variant}.{}.rank-{rank}-of-{ranks}.checkpoint", class.name()))
}

/// Where a worker writes its share beside its checkpoint `file` until
/// every worker has written its own (see `checkpoint::share`): the same
/// name with `.aside` after it.
///
/// ```
/// use bishops::checkpoint::aside_path;
/// let file = aside_path("db/.9x8.a1.rank-1-of-4.checkpoint".as_ref());
/// assert_eq!(file, std::path::Path::new("db/.9x8.a1.rank-1-of-4.checkpoint.aside"));
/// ```
pub fn aside_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".aside");
    PathBuf::from(name)
}

/// The shares of `variant` saved in `dir`, whatever the job's size, each
/// with that size: checkpoints and shares written aside.
pub fn rank_files(dir: &Path, variant: &Variant) -> Vec<(PathBuf, usize)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ranks = variant.class_list().into_iter().find_map(|class| {
            let rest = name.strip_prefix(&format!(".{}.{}.rank-", variant.name(), class.name()))?;
            let rest = rest.strip_suffix(".aside").unwrap_or(rest);
            let (rank, ranks) = rest.strip_suffix(".checkpoint")?.split_once("-of-")?;
            rank.parse::<usize>().ok()?;
            ranks.parse::<usize>().ok()
        });
        if let Some(ranks) = ranks {
            found.push((entry.path(), ranks));
        }
    }
    found.sort();
    found
}
