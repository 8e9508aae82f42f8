//! `suggest_posting_windows`: UTC posting windows from the workspace's own
//! measured history.
//!
//! No input (`{}`). Samples are measured posts with an RFC 3339
//! `publishedAt` and integer likes; fewer than three is
//! `insufficient_measured_history`. Samples are grouped by UTC hour
//! (offsets converted), hours ranked by average likes (highest first, ties
//! to the earlier hour), and the top two kept. Data: `windows: [{hourUtc,
//! window, averageLikes, sampleSize}]`, `insufficientData: false`,
//! `measuredPosts`, `confidence`, `limitations`, `basis: [{postId, hourUtc,
//! likes}]`.
//!
//! Decision: the basis lists the samples in the chosen windows, most likes
//! first, at most [`MAX_BASIS`] of them so the evidence stays within the
//! envelope's 100 items; when it is cut, `limitations` says so. Evidence:
//! `harmonia_measured_post_history`, then `harmonia_measured_post` per basis
//! post.

use harmonia_guest_sdk::error::{AUTHORIZATION_FAILED, INSUFFICIENT_MEASURED_HISTORY, INVALID_INPUT};
use harmonia_guest_sdk::{Descriptor, Evidence, NoInput, Output, Scope, ToolError, Workspace};
use harmonia_tool_common::posts::{MeasuredPost, by_likes_then_recency, parse_engagement};
use serde_json::{Value, json};

/// Fewest samples that give windows.
pub const MIN_SAMPLES: usize = 3;
/// Windows returned.
pub const WINDOWS: usize = 2;
/// Most basis posts (evidence holds at most 100 items, one is the dataset).
pub const MAX_BASIS: usize = 99;

/// The tool's contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        name: "suggest_posting_windows",
        version: env!("CARGO_PKG_VERSION"),
        purpose: "Suggest the two best UTC posting hours from the workspace's own measured post history, with the basis.",
        input_schema: NoInput::schema(),
        errors: Descriptor::errors_with_runtime(&[
            INVALID_INPUT,
            INSUFFICIENT_MEASURED_HISTORY,
            AUTHORIZATION_FAILED,
        ]),
        scope: Scope::Workspace,
        deadline_ms: 30_000,
        skills: vec!["posting-schedule"],
    }
}

/// One ranked hour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HourStats {
    /// UTC hour, 0 to 23.
    pub hour: u8,
    /// Sum of likes.
    pub likes: u128,
    /// Samples in the hour.
    pub samples: u64,
}

impl HourStats {
    /// Average likes times ten, rounded half to even.
    pub fn average_tenths(self) -> u128 {
        let numerator = self.likes * 10;
        let denominator = u128::from(self.samples);
        let (quotient, remainder) = (numerator / denominator, numerator % denominator);
        match (remainder * 2).cmp(&denominator) {
            std::cmp::Ordering::Greater => quotient + 1,
            std::cmp::Ordering::Equal => quotient + (quotient % 2),
            std::cmp::Ordering::Less => quotient,
        }
    }
}

/// Hours ranked by average likes, highest first, ties to the earlier hour.
pub fn rank_hours(samples: &[&MeasuredPost]) -> Vec<HourStats> {
    let mut hours: Vec<HourStats> = (0..24).map(|hour| HourStats { hour, likes: 0, samples: 0 }).collect();
    for post in samples {
        if let Some(published) = post.published {
            let stats = &mut hours[usize::from(published.hour())];
            stats.likes += u128::from(post.likes);
            stats.samples += 1;
        }
    }
    hours.retain(|stats| stats.samples > 0);
    // Compare averages exactly: a/b > c/d  <=>  a*d > c*b.
    hours.sort_by(|a, b| {
        (b.likes * u128::from(a.samples)).cmp(&(a.likes * u128::from(b.samples))).then(a.hour.cmp(&b.hour))
    });
    hours
}

/// `HH:00-HH:00 UTC`, 23 wrapping to 00.
pub fn window_label(hour: u8) -> String {
    format!("{hour:02}:00-{:02}:00 UTC", (hour + 1) % 24)
}

fn confidence(samples: usize) -> &'static str {
    match samples {
        0..=9 => "low",
        10..=29 => "medium",
        _ => "high",
    }
}

/// Run the tool on `input` against `workspace`.
pub fn run(workspace: &impl Workspace, _input: NoInput) -> Result<Output, ToolError> {
    let document = workspace.engagement().map_err(ToolError::from_read)?;
    let engagement = parse_engagement(&document).ok_or_else(ToolError::dependency_unavailable)?;
    let samples: Vec<&MeasuredPost> =
        engagement.posts.iter().filter(|post| post.published.is_some()).collect();
    if samples.len() < MIN_SAMPLES {
        return Err(ToolError::insufficient_measured_history());
    }
    let chosen: Vec<HourStats> = rank_hours(&samples).into_iter().take(WINDOWS).collect();
    let windows: Vec<Value> = chosen
        .iter()
        .map(|stats| {
            let average = stats.average_tenths() as f64 / 10.0;
            json!({"hourUtc": stats.hour, "window": window_label(stats.hour), "averageLikes": average, "sampleSize": stats.samples})
        })
        .collect();
    let hour_of = |post: &MeasuredPost| post.published.map(|published| published.hour()).unwrap_or_default();
    let mut basis: Vec<&MeasuredPost> = samples
        .iter()
        .copied()
        .filter(|post| chosen.iter().any(|stats| stats.hour == hour_of(post)))
        .collect();
    basis.sort_by(|a, b| by_likes_then_recency(a, b));
    let in_windows = basis.len();
    basis.truncate(MAX_BASIS);
    let mut limitations = vec![
        format!("Based on {} measured posts with a publication time.", samples.len()),
        "Likes show which hours went well in the past, not that the hour caused them.".to_owned(),
    ];
    if in_windows > basis.len() {
        limitations
            .push(format!("The basis lists {} of the {in_windows} posts in these windows.", basis.len()));
    }
    let data = json!({
        "windows": windows,
        "insufficientData": false,
        "measuredPosts": samples.len(),
        "confidence": confidence(samples.len()),
        "limitations": limitations,
        "basis": basis.iter().map(|post| json!({"postId": post.post_id, "hourUtc": hour_of(post), "likes": post.likes})).collect::<Vec<_>>(),
    });
    let evidence = std::iter::once(Evidence::dataset("harmonia_measured_post_history"))
        .chain(basis.iter().map(|post| Evidence::record("harmonia_measured_post", post.post_id.clone())))
        .collect();
    Ok(Output::new(data, evidence))
}

harmonia_guest_sdk::export!(descriptor, run, harmonia_guest_sdk::HostWorkspace);

#[cfg(test)]
mod tests {
    use super::*;
    use harmonia_guest_sdk::capability::fake::FakeWorkspace;

    fn run_on(posts: Value) -> Result<Output, ToolError> {
        let document = json!({"posts": posts, "takeaways": null}).to_string();
        run(&FakeWorkspace { engagement: Some(Ok(document)), ..Default::default() }, NoInput {})
    }

    fn post(id: &str, likes: u64, at: &str) -> Value {
        json!({"postId": id, "text": "t", "likes": likes, "publishedAt": at})
    }

    #[test]
    fn offsets_land_in_their_utc_hour_and_ties_break_early() {
        let output = run_on(json!([
            post("a", 10, "2026-11-02T15:30:00+01:00"), // 14 UTC
            post("b", 30, "2026-11-03T14:59:59Z"),      // 14 UTC
            post("c", 20, "2026-11-04T09:00:00-05:00"), // 14 UTC
            post("d", 20, "2026-11-05T03:00:00Z"),      // 03 UTC
            post("e", 20, "2026-11-05T23:10:00Z"),      // 23 UTC
        ]))
        .unwrap();
        assert_eq!(
            output.data["windows"],
            json!([
                {"hourUtc": 3, "window": "03:00-04:00 UTC", "averageLikes": 20.0, "sampleSize": 1},
                {"hourUtc": 14, "window": "14:00-15:00 UTC", "averageLikes": 20.0, "sampleSize": 3},
            ])
        );
        assert_eq!(output.data["measuredPosts"], 5);
        assert_eq!(output.data["confidence"], "low");
        assert_eq!(output.data["insufficientData"], false);
        assert_eq!(output.data["basis"][0], json!({"postId": "b", "hourUtc": 14, "likes": 30}));
        assert_eq!(output.evidence.len(), 1 + 4);
        assert_eq!(output.evidence[0], Evidence::dataset("harmonia_measured_post_history"));
    }

    #[test]
    fn hour_23_wraps_and_averages_round_half_to_even() {
        assert_eq!(window_label(23), "23:00-00:00 UTC");
        assert_eq!(window_label(0), "00:00-01:00 UTC");
        let tenths = |likes, samples| HourStats { hour: 0, likes, samples }.average_tenths();
        assert_eq!(tenths(1, 4), 2); // 0.25 -> 0.2
        assert_eq!(tenths(3, 4), 8); // 0.75 -> 0.8
        assert_eq!(tenths(10, 3), 33); // 3.333 -> 3.3
        assert_eq!(tenths(20, 3), 67); // 6.667 -> 6.7
        let output = run_on(json!([
            post("a", 1, "2026-11-02T23:00:00Z"),
            post("b", 0, "2026-11-02T23:10:00Z"),
            post("c", 0, "2026-11-02T23:20:00Z"),
            post("d", 0, "2026-11-02T23:30:00Z")
        ]))
        .unwrap();
        assert_eq!(output.data["windows"][0]["averageLikes"], json!(0.2));
        assert_eq!(output.data["windows"][0]["window"], "23:00-00:00 UTC");
    }

    #[test]
    fn fewer_than_three_samples_is_insufficient() {
        let two = json!([post("a", 5, "2026-11-02T10:00:00Z"), post("b", 5, "2026-11-02T11:00:00Z"),
            {"postId": "c", "likes": 9}, {"postId": "d", "likes": 9, "publishedAt": "not a time"}, {"postId": "e", "likes": null, "publishedAt": "2026-11-02T10:00:00Z"}]);
        assert_eq!(run_on(two), Err(ToolError::insufficient_measured_history()));
    }

    #[test]
    fn large_histories_keep_evidence_within_the_envelope() {
        let posts: Vec<Value> = (0..1000)
            .map(|i| {
                post(&format!("p{i}"), i % 97, &format!("2026-11-{:02}T{:02}:00:00Z", 1 + i % 28, i % 3))
            })
            .collect();
        let output = run_on(Value::Array(posts)).unwrap();
        assert_eq!(output.data["confidence"], "high");
        assert_eq!(output.data["measuredPosts"], 1000);
        assert_eq!(output.evidence.len(), 100);
        assert_eq!(output.data["limitations"].as_array().unwrap().len(), 3);
    }
}
