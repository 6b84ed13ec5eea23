//! `mpirun` across network hosts made on this machine by `scripts/cluster`:
//! network namespaces joined by virtual Ethernet links to a switch, with
//! addresses only between them. Ranks on different hosts talk TCP over the
//! links (the tests read each link's byte counts), and the tables they
//! write are, exported, byte for byte those of one process. The cluster is
//! torn down however its command ends.
//!
//! Built only with `--features mpi`. The tests need root, iproute2 and
//! `mpirun`, and are ignored otherwise: `.ci/run` runs them with `cargo
//! test --features mpi --test cluster -- --ignored` where it is root.

#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_bishops");

mod common;
use common::succeeded;

/// The script that makes the clusters.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cluster")
}

/// A cluster name of this test process's own: `tag` and the process id.
fn name(tag: &str) -> String {
    format!("{tag}{}", std::process::id() % 100_000)
}

/// The namespaces of cluster `name` that are up.
fn namespaces(name: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().expect("ip runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|ns| ns.strip_prefix(name).is_some_and(|rest| rest.starts_with('-')))
        .map(str::to_owned)
        .collect()
}

/// `scripts/cluster run NAME HOSTS -- sh -c SHELL`.
fn on_cluster(name: &str, hosts: usize, shell: &str) -> Output {
    Command::new(script())
        .args(["run", name, &hosts.to_string(), "--", "sh", "-c", shell])
        .output()
        .expect("scripts/cluster runs")
}

/// The bytes each host's link sent, from what `scripts/cluster run` prints
/// as it ends.
fn sent(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter(|line| line.starts_with("cluster: ") && line.contains(" eth0 "))
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "tx_bytes").expect("tx_bytes");
            words[at + 1].parse().expect("a byte count")
        })
        .collect()
}

/// The length and a 64-bit hash of the export of `variant` from `db`, read
/// as it comes: 11x8's is some 20 GB, more than the tests may hold.
fn export_digest(db: &Path, variant: &str) -> (u64, u64) {
    use std::hash::Hasher;
    use std::io::Read;
    let mut child = Command::new(BIN)
        .args(["--db", db.to_str().unwrap(), "export", variant])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("bishops runs");
    let mut stdout = child.stdout.take().unwrap();
    let (mut len, mut hasher) = (0u64, std::hash::DefaultHasher::new());
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = stdout.read(&mut buffer).expect("the export reads");
        if n == 0 {
            break;
        }
        hasher.write(&buffer[..n]);
        len += n as u64;
    }
    assert!(child.wait().unwrap().success(), "export of {variant} failed");
    (len, hasher.finish())
}

fn export(db: &Path, variant: &str) -> Vec<u8> {
    let out = Command::new(BIN)
        .args(["--db", db.to_str().unwrap(), "export", variant])
        .output()
        .expect("bishops runs");
    succeeded(out, "export").stdout
}

#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn ranks_on_separate_hosts_write_the_table_one_process_writes() {
    for (variant, method) in [
        ("7x6", "tight"),
        ("7x6", "two-bit"),
        ("9x6", "tight"),
        ("9x6", "two-bit"),
        ("9x8", "tight"),
        ("9x8", "two-bit"),
    ] {
        let single = common::scratch("cluster", &format!("single-{variant}-{method}"));
        let out = Command::new(BIN)
            .args(["--db", single.to_str().unwrap(), "solve", variant, "--method", method])
            .output()
            .expect("bishops runs");
        succeeded(out, variant);
        let expected = export(&single, variant);
        for hosts in [2, 3, 4] {
            let db = common::scratch("cluster", &format!("{variant}-{method}-{hosts}"));
            let cluster = name("bt");
            let shell = format!(
                "mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np {hosts} {BIN} --db {} solve {variant} --method {method} --threads 1",
                db.display()
            );
            let out = succeeded(
                on_cluster(&cluster, hosts, &shell),
                &format!("{variant} {method} on {hosts} hosts"),
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            // Every host sent its share over its link: TCP, not shared memory.
            let sent = sent(&stderr);
            assert_eq!(sent.len(), hosts, "{stderr}");
            assert!(
                sent.iter().all(|&b| b > 10_000),
                "{variant} {method} on {hosts} hosts sent {sent:?}"
            );
            assert!(
                export(&db, variant) == expected,
                "{variant} {method}: {hosts} hosts exported another table"
            );
            assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
            let _ = std::fs::remove_dir_all(&db);
        }
        let _ = std::fs::remove_dir_all(&single);
    }
}

/// 11x8 by two bits on two hosts: a 35 s job in a release build, some
/// 200 to 360 MB over each link; the exports are compared by length and
/// hash as they stream. `.ci/run`, whose tests are debug builds,
/// skips it: `cargo test --release --features mpi --test cluster --
/// --ignored eleven_by_eight`.
#[test]
#[ignore = "a release test: cargo test --release --features mpi --test cluster -- --ignored eleven_by_eight"]
fn eleven_by_eight_by_two_bits_on_two_hosts_writes_the_table_one_process_writes() {
    let single = common::scratch("cluster", "single-11x8");
    let out = Command::new(BIN)
        .args(["--db", single.to_str().unwrap(), "solve", "11x8", "--method", "two-bit"])
        .output()
        .expect("bishops runs");
    succeeded(out, "11x8");
    let db = common::scratch("cluster", "11x8-2");
    let shell = format!(
        "mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np 2 {BIN} --db {} solve 11x8 --method two-bit --threads 1",
        db.display()
    );
    let out = succeeded(on_cluster(&name("b8"), 2, &shell), "11x8 on 2 hosts");
    let sent = sent(&String::from_utf8_lossy(&out.stderr));
    assert!(sent.len() == 2 && sent.iter().all(|&b| b > 10_000_000), "sent {sent:?}");
    assert_eq!(
        export_digest(&db, "11x8"),
        export_digest(&single, "11x8"),
        "2 hosts exported another table"
    );
    let _ = std::fs::remove_dir_all(&db);
    let _ = std::fs::remove_dir_all(&single);
}

#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_host_lost_mid_search_ends_the_job_and_the_same_command_resumes() {
    let db = common::scratch("cluster", "lost");
    std::fs::create_dir_all(&db).unwrap();
    let cluster = name("bl");
    // A checkpoint after every layer, so that the rerun has one to resume.
    let shell = format!(
        "BISHOPS_CHECKPOINT_SECONDS=0 mpirun --hostfile \"$CLUSTER_HOSTFILE\" -np 3 {BIN} --db {} solve 9x8 --method two-bit --threads 1",
        db.display()
    );
    let mut job = Command::new(script())
        .args(["run", &cluster, "3", "--", "sh", "-c", &shell])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let began = std::time::Instant::now();
    while !(0..3).all(|r| db.join(format!(".9x8.a1.rank-{r}-of-3.checkpoint")).exists()) {
        assert!(began.elapsed().as_secs() < 60, "the ranks saved no checkpoint");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Every process of the second host dies at once, as when a node is lost.
    let pids = Command::new("ip")
        .args(["netns", "pids", &format!("{cluster}-2")])
        .output()
        .unwrap();
    let pids: Vec<i32> = String::from_utf8_lossy(&pids.stdout)
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(!pids.is_empty(), "no process on the second host");
    for pid in pids {
        // SAFETY: a plain kill(2) of a process of this test's cluster.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let lost = std::time::Instant::now();
    let status = loop {
        if let Some(status) = job.try_wait().unwrap() {
            break status;
        }
        assert!(
            lost.elapsed().as_secs() < 60,
            "the job did not end within 60 s of losing a host"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut job.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    eprintln!(
        "the job ended {:.1} s after the host was lost",
        lost.elapsed().as_secs_f64()
    );
    assert!(!db.join("9x8.sqlite").exists(), "a database after a failed job");
    assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
    // The same command on a cluster made anew resumes and writes the table
    // one process writes.
    let rerun = succeeded(on_cluster(&cluster, 3, &shell), "rerun");
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(stderr.contains("resuming"), "{stderr}");
    let single = common::scratch("cluster", "lost-single");
    let out = Command::new(BIN)
        .args(["--db", single.to_str().unwrap(), "solve", "9x8", "--method", "two-bit"])
        .output()
        .unwrap();
    succeeded(out, "one process");
    assert!(
        export(&db, "9x8") == export(&single, "9x8"),
        "the resumed job wrote another table"
    );
    let _ = std::fs::remove_dir_all(&db);
    let _ = std::fs::remove_dir_all(&single);
}

#[test]
#[ignore = "needs root, iproute2 and mpirun: cargo test --features mpi --test cluster -- --ignored"]
fn a_cluster_is_torn_down_however_its_command_ends() {
    let cluster = name("bf");
    // While it runs, the hosts and the switch are up, and no host has a
    // route past the cluster's own addresses.
    let shell = "ip netns list; echo routes:; ip route; exit 3";
    let out = on_cluster(&cluster, 3, shell);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for ns in ["-1", "-2", "-3", "-sw"] {
        assert!(stdout.contains(&format!("{cluster}{ns}")), "{stdout}");
    }
    let routes: Vec<&str> = stdout.lines().skip_while(|l| *l != "routes:").skip(1).collect();
    assert_eq!(
        routes,
        ["10.77.0.0/24 dev eth0 proto kernel scope link src 10.77.0.1 "],
        "{stdout}"
    );
    assert!(namespaces(&cluster).is_empty(), "cluster {cluster} left up");
    // A name in use is refused, and the cluster that has it is not touched.
    let dir = common::scratch("cluster", "up");
    let up = |dir: &Path| {
        Command::new(script())
            .args(["up", &cluster, "2", dir.to_str().unwrap()])
            .output()
            .expect("scripts/cluster runs")
    };
    succeeded(up(&dir), "up");
    let again = up(&dir);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is up already"));
    assert_eq!(namespaces(&cluster).len(), 3);
    let run = on_cluster(&cluster, 2, "true");
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("is up already"));
    assert_eq!(
        namespaces(&cluster).len(),
        3,
        "a refused run tore down the cluster it found"
    );
    succeeded(
        Command::new(script()).args(["down", &cluster]).output().unwrap(),
        "down",
    );
    assert!(namespaces(&cluster).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
