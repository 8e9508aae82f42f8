//! What the validator knows about the built-in tools, as one table: the
//! only rules that name a tool. Every other rule reads envelopes alone, so
//! a plugin is judged by its envelopes like any built-in tool.
//!
//! | tool | fact | rule |
//! | --- | --- | --- |
//! | `get_operator_feed` ([`FEED_TOOL`]) | a success carries `data.freshness.state`, one of [`FRESHNESS_STATES`], and an RFC 3339 `data.freshness.readAt` | 6, `feed_freshness_missing` |
//!
//! Whether final data "holds records" (rule 10, `false_no_data`) is judged
//! from the data's shape, not from a list of tools (see `records_held`).

/// The operator feed tool, whose successes must say how fresh they are.
pub const FEED_TOOL: &str = "get_operator_feed";
/// The freshness states a feed success may report.
pub const FRESHNESS_STATES: [&str; 3] = ["current", "stale", "unavailable"];
