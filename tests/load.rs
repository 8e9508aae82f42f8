//! Load and isolation: 10,000 calls over 16 threads across two workspaces.
//! Every envelope must hold only its own workspace's data, and the host's
//! resident memory must stay bounded over the run.

use harmonia_contract::workspace_document::WorkspaceDocument;
use harmonia_host::capability::workspace::sqlite::import;
use harmonia_host::config::HostConfig;
use harmonia_host::{CallContext, Host};
use harmonia_testkit::tempdir::TempDir;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};

const THREADS: usize = 16;
const CALLS: usize = 10_000;

fn tenant(prefix: &str, workspace: &str, hour_offset: u32) -> Value {
    let posts: Vec<Value> = (0..40)
        .map(|i| {
            json!({"postId": format!("{prefix}-post-{i}"), "text": format!("{prefix} post {i}"), "likes": (i * 7) % 50,
                "publishedAt": format!("2026-11-{:02}T{:02}:00:00Z", 1 + i % 28, (i + hour_offset) % 24)})
        })
        .collect();
    json!({"workspaceId": workspace, "updatedAt": "2026-11-30T09:00:00Z", "posts": posts,
        "takeaways": {"owner": prefix},
        "feed": {"pendingItems": [{"id": format!("{prefix}-pending")}], "jobHealth": {"active": 1, "failed": 0},
                 "goals": [{"id": format!("{prefix}-goal")}], "recentPublished": [{"postId": format!("{prefix}-post-1"), "publishedAt": null}]},
        "jobs": [{"id": format!("{prefix}-job"), "title": format!("{prefix} job"), "status": "running"}]})
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find(|line| line.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Every string in `value` that names a tenant must name `own`.
fn only_own_data(value: &Value, own: &str, other: &str) -> bool {
    !value.to_string().contains(&format!("{other}-")) && value.to_string().contains(&format!("{own}-"))
}

fn check(host: &Host, call: usize) {
    let (own, other, workspace) =
        if call.is_multiple_of(2) { ("a", "b", "ws_a") } else { ("b", "a", "ws_b") };
    let context = CallContext::for_workspace(workspace);
    match (call / 2) % 5 {
        0 => {
            let envelope = host.call("get_engagement_insights", "{}", &context).unwrap().to_value();
            assert!(only_own_data(&envelope, own, other), "{envelope}");
            assert_eq!(envelope["data"]["takeaways"]["owner"], own);
        }
        1 => {
            let envelope = host.call("get_operator_feed", "{}", &context).unwrap().to_value();
            assert!(only_own_data(&envelope["data"], own, other), "{envelope}");
        }
        2 => {
            let envelope = host.call("suggest_posting_windows", "{}", &context).unwrap().to_value();
            assert!(only_own_data(&envelope, own, other), "{envelope}");
        }
        3 => {
            let input = json!({"job_id": format!("{own}-job")}).to_string();
            let envelope = host.call("get_job_status", &input, &context).unwrap().to_value();
            assert_eq!(envelope["data"]["job"]["id"], format!("{own}-job"));
        }
        _ => {
            let input = json!({"job_id": format!("{other}-job")}).to_string();
            let envelope = host.call("get_job_status", &input, &context).unwrap().to_value();
            assert_eq!(
                envelope["error"]["code"], "job_not_found",
                "a tenant reads another's job: {envelope}"
            );
        }
    }
}

#[test]
fn ten_thousand_calls_over_sixteen_threads_stay_in_their_workspace() {
    let dir = TempDir::new("load");
    let db = dir.path().join("tenants.db");
    for (prefix, workspace, offset) in [("a", "ws_a", 0), ("b", "ws_b", 7)] {
        import(&db, &WorkspaceDocument::from_value(&tenant(prefix, workspace, offset)).unwrap()).unwrap();
    }
    let mut config = HostConfig::default();
    config.workspace.path = db;
    let host = Host::new(config).unwrap();
    let next = AtomicUsize::new(0);
    let warm = AtomicUsize::new(0);
    let warm_rss = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                loop {
                    let call = next.fetch_add(1, Ordering::SeqCst);
                    if call >= CALLS {
                        break;
                    }
                    check(&host, call);
                    if warm.fetch_add(1, Ordering::SeqCst) == 2_000 {
                        warm_rss.store(resident_kib() as usize, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert!(next.load(Ordering::SeqCst) >= CALLS);
    let growth_kib = resident_kib().saturating_sub(warm_rss.load(Ordering::SeqCst) as u64);
    // A leak of even a few hundred bytes per call would show as megabytes
    // over 8,000 calls; this bound catches unbounded growth, not noise.
    assert!(growth_kib < 32 * 1024, "resident memory grew {growth_kib} KiB after warm-up");
}
