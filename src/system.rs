//! What the machine has: memory available, this process's peak memory,
//! free disk, and sizes written for people. Plans of long work (a solve,
//! a full check) ask here before they start, so that they can refuse what
//! does not fit instead of failing half way. And one setting of the
//! process's own sockets, for the libraries that open them unset.

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

/// Turns Nagle's algorithm off (`TCP_NODELAY`) on every TCP socket this
/// process holds, and returns how many it set.
///
/// For the sockets a library opened and left unset: Open MPI's PMIx
/// client talks to its launcher over loopback TCP with Nagle's algorithm
/// on, so the small messages of `MPI_Finalize` wait on the launcher's
/// delayed acknowledgements, 40 ms a job. Turning it off changes when
/// bytes leave, never which bytes, so it is safe on any TCP socket.
pub fn tcp_nodelay_all() -> usize {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    let int = |fd, level, name| {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `value` and `len` are writable and `len` is `value`'s size;
        // on a descriptor that is not a socket getsockopt fails and writes
        // nothing.
        let ok = unsafe { libc::getsockopt(fd, level, name, (&raw mut value).cast(), &mut len) } == 0;
        ok.then_some(value)
    };
    let mut set = 0;
    for entry in fds.flatten() {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<libc::c_int>().ok()) else {
            continue;
        };
        let tcp = int(fd, libc::SOL_SOCKET, libc::SO_TYPE) == Some(libc::SOCK_STREAM)
            && matches!(
                int(fd, libc::SOL_SOCKET, libc::SO_DOMAIN),
                Some(libc::AF_INET | libc::AF_INET6)
            );
        if !tcp {
            continue;
        }
        let on: libc::c_int = 1;
        // SAFETY: `on` is a readable int of the size given.
        let done = unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&raw const on).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        set += usize::from(done == 0);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_nodelay_all_sets_both_ends_of_a_loopback_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        assert!(!client.nodelay().unwrap() && !server.nodelay().unwrap());
        assert!(tcp_nodelay_all() >= 3, "the listener and both ends");
        assert!(client.nodelay().unwrap() && server.nodelay().unwrap());
    }
}
