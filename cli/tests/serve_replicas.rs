//! Two `harmonia serve` replicas behind nginx, configured by the README's
//! example (`examples/replicas/nginx.conf`), all on 127.0.0.1: MCP sessions
//! from the official Python SDK stay on the replica that opened them, new
//! ones spread over both; SIGTERM to one drains its call in flight while
//! new sessions land on the other, and after it has exited every session
//! is on the other. nginx comes from Debian's package
//! (`scripts/install-test-deps.sh` installs it).

mod serve_support;

use serde_json::json;
use serve_support::{assert_passed, harmonia, repo, scenario_command, spawn_listening};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

fn nginx() -> PathBuf {
    let found = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists());
    found.expect("nginx is missing: run scripts/install-test-deps.sh (it installs Debian's nginx)")
}

/// A child stopped with SIGTERM (nginx's master then stops its workers),
/// killed if it has not exited within 10 s.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.0.try_wait() {
            return;
        }
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Replica `id` of a mock server sharing `dir`'s tokens, trace key,
/// plugins and component cache with the other.
fn replica(dir: &Path, id: &str) -> (Stopped, String) {
    std::fs::write(
        dir.join(format!("serve-{id}.toml")),
        format!("tokens_file = \"tokens.toml\"\nreplica_id = \"{id}\"\n"),
    )
    .unwrap();
    let (child, url) = spawn_listening(
        harmonia(dir)
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(dir.join("harmonia.toml"))
            .arg("--skills")
            .arg(dir.join("no-skills"))
            .arg("--serve-config")
            .arg(dir.join(format!("serve-{id}.toml"))),
    );
    (Stopped(child), url.trim_start_matches("http://").to_owned())
}

fn free_loopback_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// nginx on a free loopback port with the example config, its replicas'
/// addresses put in: the child and the balancer's URL.
fn balancer(dir: &Path, a: &str, b: &str) -> (Stopped, String) {
    let example = std::fs::read_to_string(repo().join("examples/replicas/nginx.conf")).unwrap();
    let listen = format!("127.0.0.1:{}", free_loopback_port());
    let config =
        example.replace("127.0.0.1:8080", &listen).replace("127.0.0.1:8081", a).replace("127.0.0.1:8082", b);
    let prefix = dir.join("nginx");
    std::fs::create_dir_all(prefix.join("tmp")).unwrap();
    std::fs::write(prefix.join("nginx.conf"), config).unwrap();
    let child = Command::new(nginx())
        .arg("-p")
        .arg(&prefix)
        .args(["-c", "nginx.conf", "-e", "stderr", "-g", "daemon off; user root;"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(&listen).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "nginx did not listen on {listen}");
        std::thread::sleep(Duration::from_millis(20));
    }
    (Stopped(child), format!("http://{listen}"))
}

/// Reads the client's output up to the line `wanted`, echoing it.
fn expect_line(stdout: &mut BufReader<ChildStdout>, wanted: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the client ended before printing {wanted:?}");
        print!("{line}");
        if line.trim() == wanted {
            return;
        }
    }
}

#[test]
fn sessions_keep_their_replica_and_a_drained_replicas_new_sessions_go_to_the_other() {
    let dir = std::env::temp_dir().join(format!("harmonia-serve-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("no-skills")).unwrap();
    let hostile_loop = harmonia_artifacts::test_guest("hostile-loop").unwrap();
    std::fs::write(
        dir.join("harmonia.toml"),
        format!(
            "mock = true\n[plugins]\nfiles = [{hostile_loop:?}]\n[limits]\nmax_deadline_ms = 1000\n[trace]\nkey_file = {:?}\n",
            dir.join("key")
        ),
    )
    .unwrap();
    let added = harmonia(&dir)
        .args(["serve", "token", "add", "--file"])
        .arg(dir.join("tokens.toml"))
        .args(["--workspace", "ws_demo", "--tools", "hostile_loop,get_job_status"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let token = String::from_utf8(added.stdout).unwrap().trim().to_owned();

    let (mut a, a_address) = replica(&dir, "a");
    let (b, b_address) = replica(&dir, "b");
    let (nginx, url) = balancer(&dir, &a_address, &b_address);

    let mut client = scenario_command("replicas", &json!({"url": url, "token": token}))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(client.stdout.take().unwrap());
    expect_line(&mut stdout, "calling");
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-TERM", &a.0.id().to_string()]).status().unwrap().success());
    expect_line(&mut stdout, "drained");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = a.0.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "replica a did not exit after its drain");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "replica a exits 0 after its drain");
    client.stdin.as_mut().unwrap().write_all(b"go on\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let output = client.wait_with_output().unwrap();
    assert_passed(&std::process::Output { stdout: rest.into_bytes(), ..output }, "replicas");
    drop((nginx, b));
    let _ = std::fs::remove_dir_all(&dir);
}
