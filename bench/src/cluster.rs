//! `--only cluster --database URL`: what sharing state through PostgreSQL
//! costs, measured in one run beside the floors it stands on.
//!
//! The URL names a database the bench may write to (no password in it;
//! `$HARMONIA_LEDGER_PASSWORD` when it needs one): it migrates the ledger's
//! schema there and makes one scratch table of its own,
//! `harmonia_bench_floor`. Figures:
//! - the floors, on the same driver and connection: `SELECT 1`, an
//!   `UPDATE` committed asynchronously, an `UPDATE` committed durably;
//! - a guarded stateless step on its own (held by its handle, the call,
//!   recorded), on another replica than the one that recorded the step
//!   before (so the guard is rebuilt from the stored trace), with the
//!   ledger in PostgreSQL, in a SQLite file, and in memory (one process,
//!   the guard kept warm);
//! - an unguarded stateless `tools/call` through `harmonia serve` over
//!   HTTP with the rate buckets in PostgreSQL (cluster-wide) and in the
//!   process, and what the first adds (p50);
//! - calls per second through 1, 2 and 3 `harmonia serve` processes
//!   sharing the database, the clients spread round robin.
//!
//! Without `--database`, the part says it was skipped and why.

use crate::mcp::{
    INPUT, TOOL, bench_principal, bench_serve_config, call_stateless, loopback_agent, serve_on, token_file,
};
use crate::stats::Samples;
use crate::{Effort, Report};
use anyhow::{Context, Result};
use harmonia_host::Host;
use harmonia_host::config::HostConfig;
use harmonia_host::liaison::session::Liaison;
use harmonia_host::liaison::skills::SkillSet;
use harmonia_serve::config::SessionsConfig;
use harmonia_serve::database::{Database, DatabaseSettings};
use harmonia_serve::sessions::{Continue, GuardedSessions};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The database's settings for the bench's own connections.
fn settings(url: &str) -> Result<DatabaseSettings> {
    Ok(DatabaseSettings::new(url, None, None, 4, Duration::from_secs(10))?)
}

/// The floors: `SELECT 1`, an asynchronous and a durable `UPDATE`, each
/// timed `samples` times on one pooled connection.
fn floors(runtime: &tokio::runtime::Runtime, url: &str, samples: usize, out: &mut Report) -> Result<()> {
    let database = Database::new(settings(url)?, "bench-floors".into())?;
    runtime.block_on(database.migrate())?;
    let timed = |sql: &'static str, durable: bool| -> Result<Samples> {
        runtime.block_on(database.run(move |client| {
            Box::pin(async move {
                client
                    .batch_execute(
                        "CREATE TABLE IF NOT EXISTS harmonia_bench_floor (id integer PRIMARY KEY, n bigint NOT NULL);
                         INSERT INTO harmonia_bench_floor VALUES (1, 0) ON CONFLICT DO NOTHING",
                    )
                    .await?;
                let statement = client.prepare_cached(sql).await?;
                let mut times = Vec::with_capacity(samples);
                for n in 0..samples + samples / 10 {
                    let started = Instant::now();
                    if durable {
                        client.batch_execute("BEGIN; SET LOCAL synchronous_commit = on").await?;
                    }
                    client.execute(&statement, &[]).await?;
                    if durable {
                        client.batch_execute("COMMIT").await?;
                    }
                    if n >= samples / 10 {
                        times.push(started.elapsed());
                    }
                }
                Ok(Samples::new(times))
            })
        }))
        .map_err(anyhow::Error::from)
    };
    let select = timed("SELECT 1", false)?;
    let asynchronous = timed("UPDATE harmonia_bench_floor SET n = n + 1 WHERE id = 1", false)?;
    let durable = timed("UPDATE harmonia_bench_floor SET n = n + 1 WHERE id = 1", true)?;
    out.say(format!("\nshared state in PostgreSQL ({}):", database.described()));
    out.say("  floors (this driver, one connection):");
    for (what, samples) in [
        ("SELECT 1", &select),
        ("UPDATE, asynchronous commit", &asynchronous),
        ("UPDATE, durable commit", &durable),
    ] {
        out.say(format!("    {what:30} p50 {:9.1} us   p99 {:9.1} us", samples.p50_us(), samples.p99_us()));
    }
    out.insert("cluster_floor_select_us_p50", json!(select.p50_us()));
    out.insert("cluster_floor_async_update_us_p50", json!(asynchronous.p50_us()));
    out.insert("cluster_floor_durable_update_us_p50", json!(durable.p50_us()));
    Ok(())
}

/// A guarded step on `second`, after `first` recorded the one before:
/// held by its handle, the call run, recorded; `steps` times.
fn guarded_steps(
    runtime: &tokio::runtime::Runtime,
    host: &Host,
    first: &GuardedSessions,
    second: &GuardedSessions,
    steps: usize,
) -> Result<Samples> {
    let liaison = Liaison::new(host.clone(), SkillSet::builtin())?;
    let skill = liaison.skills().get("job-status").context("the job-status skill")?.clone();
    let principal = bench_principal();
    let arguments: Value = serde_json::from_str(INPUT)?;
    let lease = Duration::from_secs(30);
    let warm = steps.min(100);
    let mut times = Vec::with_capacity(steps + warm);
    runtime.block_on(async {
        for _ in 0..steps + warm {
            let mut held = first.hold(&liaison, &principal, &skill, &Continue::New, lease).await?;
            held.session().call_recorded_async(TOOL, &arguments).await?;
            let handle = first.record(held).await?;
            let started = Instant::now();
            let mut held =
                second.hold(&liaison, &principal, &skill, &Continue::Handle(handle), lease).await?;
            held.session().call_recorded_async(TOOL, &arguments).await?;
            second.record(held).await?;
            times.push(started.elapsed());
        }
        anyhow::Ok(())
    })?;
    Ok(Samples::new(times.split_off(warm)))
}

fn steps_on_each_ledger(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    dir: &Path,
    effort: &Effort,
    out: &mut Report,
) -> Result<()> {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() })?;
    let mut config = bench_serve_config();
    config.limits.max_sessions = 1_000_000;
    config.limits.max_sessions_per_credential = 1_000_000;
    let key = dir.join("session.key");
    std::fs::write(&key, "bench-key-shared-by-both-replicas-0123456789")?;
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    let pair = |ledger: Option<String>| -> Result<(GuardedSessions, GuardedSessions)> {
        let sessions = SessionsConfig { key_file: Some(key.clone()), ledger, ..SessionsConfig::default() };
        let a = GuardedSessions::new(&sessions, &config.limits, "bench-a")?;
        let b = GuardedSessions::new(&sessions, &config.limits, "bench-b")?;
        for replica in [&a, &b] {
            if let Some(database) = replica.database() {
                runtime.block_on(database.migrate())?;
            }
        }
        Ok((a, b))
    };
    let steps = effort.tool_calls;
    let (pg_a, pg_b) = pair(Some(url.to_owned()))?;
    let postgres = guarded_steps(runtime, &host, &pg_a, &pg_b, steps)?;
    let file = dir.join("sessions.db");
    let (sqlite_a, sqlite_b) = pair(Some(file.display().to_string()))?;
    let sqlite = guarded_steps(runtime, &host, &sqlite_a, &sqlite_b, steps)?;
    let memory = GuardedSessions::new(&SessionsConfig::default(), &config.limits, "bench")?;
    let in_memory = guarded_steps(runtime, &host, &memory, &memory, steps)?;
    out.say(format!("  a guarded stateless step (held by its handle, called, recorded; {steps} steps):"));
    for (what, samples) in [
        ("PostgreSQL, on another replica", &postgres),
        ("SQLite file, on another replica", &sqlite),
        ("in memory, one process", &in_memory),
    ] {
        out.say(format!("    {what:32} p50 {:9.1} us   p99 {:9.1} us", samples.p50_us(), samples.p99_us()));
    }
    out.insert("cluster_guarded_step_us_p50_postgres", json!(postgres.p50_us()));
    out.insert("cluster_guarded_step_us_p50_sqlite", json!(sqlite.p50_us()));
    out.insert("cluster_guarded_step_us_p50_memory", json!(in_memory.p50_us()));
    Ok(())
}

/// Unguarded stateless calls through `harmonia serve` with the buckets in
/// the database and in the process, alternating in rounds.
fn unguarded_calls(url: &str, dir: &Path, effort: &Effort, out: &mut Report) -> Result<()> {
    let host = Host::new(HostConfig { mock: true, ..HostConfig::default() })?;
    let token = token_file(dir, TOOL)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let local = bench_serve_config();
    let mut cluster = bench_serve_config();
    cluster.sessions.ledger = Some(url.to_owned());
    let (local_url, stop_local, _local) = serve_on(&runtime, &host, &local, dir)?;
    let (cluster_url, stop_cluster, _cluster) = serve_on(&runtime, &host, &cluster, dir)?;
    let agent = loopback_agent(Duration::from_secs(30));
    wait_ready(&agent, cluster_url.trim_end_matches("/mcp"))?;
    let rounds = 5;
    let per_round = (effort.tool_calls / rounds).max(20);
    let (mut with_local, mut with_cluster) = (Vec::new(), Vec::new());
    for n in 0..(rounds * per_round + 50) as u64 {
        for (url, times) in [(&local_url, &mut with_local), (&cluster_url, &mut with_cluster)] {
            let started = Instant::now();
            let answer = call_stateless(&agent, url, &token, n)?;
            let elapsed = started.elapsed();
            anyhow::ensure!(
                answer["result"]["structuredContent"]["status"] == "success",
                "an unguarded call failed: {answer}"
            );
            if n >= 50 {
                times.push(elapsed);
            }
        }
    }
    let _ = (stop_local.send(()), stop_cluster.send(()));
    let (local, cluster) = (Samples::new(with_local), Samples::new(with_cluster));
    let added = cluster.p50_us() - local.p50_us();
    out.say("  an unguarded stateless tools/call through harmonia serve (alternating):");
    out.say(format!(
        "    rate buckets in the process    p50 {:9.1} us   p99 {:9.1} us",
        local.p50_us(),
        local.p99_us()
    ));
    out.say(format!(
        "    rate buckets in PostgreSQL     p50 {:9.1} us   p99 {:9.1} us",
        cluster.p50_us(),
        cluster.p99_us()
    ));
    out.say(format!("    added by cluster-wide buckets  p50 {added:9.1} us"));
    out.insert("cluster_unguarded_call_us_p50_local_buckets", json!(local.p50_us()));
    out.insert("cluster_unguarded_call_us_p50_cluster_buckets", json!(cluster.p50_us()));
    out.insert("cluster_buckets_added_us_p50", json!(added));
    Ok(())
}

fn wait_ready(agent: &ureq::Agent, base: &str) -> Result<()> {
    let started = Instant::now();
    loop {
        if agent.get(format!("{base}/readyz")).call().is_ok() {
            return Ok(());
        }
        anyhow::ensure!(started.elapsed() < Duration::from_secs(60), "{base} never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A `harmonia serve` process on a free loopback port with `dir`'s
/// configs; killed when dropped.
struct Replica(Child, String);

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn replica(dir: &Path) -> Result<Replica> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["serve", "--http", "127.0.0.1:0", "--quiet", "--config"])
        .arg(dir.join("harmonia.toml"))
        .arg("--serve-config")
        .arg(dir.join("serve.toml"))
        .env("HARMONIA_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    let url = line.trim().rsplit(' ').next().unwrap_or_default().to_owned();
    anyhow::ensure!(url.starts_with("http://"), "the replica did not say where it listens: {line}");
    Ok(Replica(child, url))
}

/// Calls per second through `replicas` processes, `clients` threads
/// spreading their calls round robin, for `window`.
fn throughput(dir: &Path, token: &str, replicas: usize, clients: usize, window: Duration) -> Result<f64> {
    let started: Vec<Replica> = (0..replicas).map(|_| replica(dir)).collect::<Result<_>>()?;
    let agent = loopback_agent(Duration::from_secs(30));
    for replica in &started {
        wait_ready(&agent, &replica.1)?;
    }
    let urls: Vec<String> = started.iter().map(|replica| format!("{}/mcp", replica.1)).collect();
    let (done, stop) = (AtomicU64::new(0), AtomicBool::new(false));
    let failed = AtomicU64::new(0);
    let began = Instant::now();
    std::thread::scope(|scope| {
        for client in 0..clients {
            let (urls, done, stop, failed) = (&urls, &done, &stop, &failed);
            scope.spawn(move || {
                let agent = loopback_agent(Duration::from_secs(30));
                let mut n = client as u64;
                while !stop.load(Ordering::Relaxed) {
                    let url = &urls[n as usize % urls.len()];
                    match call_stateless(&agent, url, token, n) {
                        Ok(answer) if answer["result"]["structuredContent"]["status"] == "success" => {
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    n += clients as u64;
                }
            });
        }
        std::thread::sleep(window);
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = began.elapsed().as_secs_f64();
    anyhow::ensure!(failed.load(Ordering::Relaxed) == 0, "{} calls failed", failed.load(Ordering::Relaxed));
    Ok(done.load(Ordering::Relaxed) as f64 / elapsed)
}

fn replicas_throughput(url: &str, dir: &Path, effort: &Effort, out: &mut Report) -> Result<()> {
    let token = token_file(dir, TOOL)?;
    std::fs::write(dir.join("harmonia.toml"), "mock = true\n")?;
    let text = format!(
        "tokens_file = {:?}\n[sessions]\nledger = {:?}\n[rate_limits]\ncalls_per_second = 1e9\nburst = 1000000000\n",
        dir.join("tokens.toml"),
        url
    );
    std::fs::write(dir.join("serve.toml"), text)?;
    let clients = 8;
    let mut figures = serde_json::Map::new();
    out.say(format!(
        "  unguarded calls per second, {clients} clients round robin over the replicas ({:.1} s each):",
        effort.throughput_window.as_secs_f64()
    ));
    for replicas in 1..=3 {
        let rate = throughput(dir, &token, replicas, clients, effort.throughput_window)?;
        out.say(format!(
            "    {replicas} replica{}: {rate:10.0} calls/s",
            if replicas == 1 { " " } else { "s" }
        ));
        figures.insert(replicas.to_string(), json!(rate));
    }
    out.insert("cluster_calls_per_second", Value::Object(figures));
    Ok(())
}

/// The part, on the database `url` names; skipped, saying why, without one.
pub fn run(url: Option<&str>, effort: &Effort, out: &mut Report) -> Result<()> {
    let Some(url) = url else {
        out.say(
            "\ncluster: skipped: `--only cluster` measures a PostgreSQL database, named by `--database URL`",
        );
        return Ok(());
    };
    let dir = std::env::temp_dir().join(format!("harmonia-bench-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<()> {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        floors(&runtime, url, effort.tool_calls, out)?;
        steps_on_each_ledger(&runtime, url, &dir, effort, out)?;
        unguarded_calls(url, &dir, effort, out)?;
        replicas_throughput(url, &dir, effort, out)?;
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
