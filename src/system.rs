//! What the machine has: memory available, this process's peak memory,
//! free disk, and sizes written for people. Plans of long work (a solve,
//! a full check) ask here before they start, so that they can refuse what
//! does not fit instead of failing half way.

use std::path::Path;

/// Bytes of memory available to a new allocation, from `/proc/meminfo`.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The peak resident memory of this process so far, from `/proc/self/status`.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A size for people: KiB below a MiB, whole MiB above.
///
/// ```
/// assert_eq!(bishops::system::human_bytes(1000), "1 KiB");
/// assert_eq!(bishops::system::human_bytes(3 << 20), "3 MiB");
/// ```
pub fn human_bytes(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    } else {
        format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
    }
}

/// Bytes free to this user on the file system of `dir` (or of its nearest
/// existing ancestor, when it is still to be made).
pub fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let mut at = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    while !at.exists() {
        at = at
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
    }
    let path = std::ffi::CString::new(at.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string and `stat` is writable
    // memory of the right type, which statvfs fills when it returns 0.
    let stat = unsafe {
        if libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    // The field types differ between platforms; they are u64 here.
    #[allow(clippy::useless_conversion)]
    let (blocks, size) = (u64::from(stat.f_bavail), u64::from(stat.f_frsize));
    blocks.checked_mul(size)
}
