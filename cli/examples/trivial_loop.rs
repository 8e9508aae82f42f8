//! Calls the trivial guest in a loop, for profiling the per-call path:
//! `perf record -e cpu-clock -g target/release/examples/trivial_loop 200000`.

use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};

fn main() {
    let calls: usize = std::env::args().nth(1).and_then(|text| text.parse().ok()).unwrap_or(100_000);
    let mut config = HostConfig::default();
    config.plugins.builtin = false;
    let bytes = harmonia_artifacts::bench_guest("testing-trivial").expect("bench guest").to_vec();
    let host = Host::builder(config).component("trivial", bytes).build().expect("host");
    let context = CallContext::default();
    let started = std::time::Instant::now();
    for _ in 0..calls {
        std::hint::black_box(host.call("trivial_probe", "{}", &context).expect("loaded"));
    }
    let elapsed = started.elapsed();
    println!("{calls} calls, {:.1} us per call", elapsed.as_secs_f64() * 1e6 / calls as f64);
}
