//! Token buckets every replica shares: one row per credential (and per
//! tool that `[rate_limits.tools]` names) in the database's unlogged
//! `rate_buckets` table, refilled and taken from by the function
//! `harmonia_admit` in one round trip, on the database's clock.
//!
//! So a credential's rate holds over all its calls, whichever replica
//! serves them: while every replica reaches the database, at most
//! `burst + rate × t` of its calls run in any `t` seconds, cluster-wide.
//! A replica that cannot reach it (or gets no answer within
//! [`BUDGET`]) does not wait for it again until a heartbeat succeeds, and
//! meanwhile lets calls through buckets of its own, each `1/N` of the rate
//! and of the burst, N being the replicas it last saw beating: a
//! credential then gets at most `(1 + 1/N) × (burst + rate × t)` in all
//! while one replica of N is cut off, and `burst + rate × t` when all are
//! (docs/contract.md §6).

use crate::config::Rate;
use crate::database::Database;
use std::sync::Arc;
use std::time::Duration;

/// The longest an unguarded call waits for its buckets' answer.
pub const BUDGET: Duration = Duration::from_millis(250);

/// The buckets of the shared database.
pub struct ClusterBuckets {
    database: Arc<Database>,
}

impl ClusterBuckets {
    /// Buckets in `database`.
    pub fn new(database: Arc<Database>) -> Self {
        Self { database }
    }

    /// One call of `tool` by `credential` through its shared buckets:
    /// `Ok(Ok(()))` when it may run, `Ok(Err(wait))` when not yet;
    /// `Err(replicas)` when the database cannot answer now (the caller
    /// falls back to a 1/`replicas` share of its own).
    pub async fn admit(
        &self,
        credential: &str,
        tool: &str,
        rate: Rate,
        tool_rate: Option<Rate>,
    ) -> Result<Result<(), Duration>, u32> {
        if !self.database.reachable() {
            return Err(self.database.replicas());
        }
        let (credential, tool) = (credential.to_owned(), tool_rate.map(|_| tool.to_owned()));
        let answered = self
            .database
            .run_within(BUDGET, move |client| {
                Box::pin(async move {
                    let admit =
                        client.prepare_cached("SELECT harmonia_admit($1, $2, $3, $4, $5, $6)").await?;
                    let (tool_rate, tool_burst) = tool_rate.map_or((None, None), |rate| {
                        (Some(rate.calls_per_second), Some(f64::from(rate.burst)))
                    });
                    let row = client
                        .query_one(
                            &admit,
                            &[
                                &credential,
                                &rate.calls_per_second,
                                &f64::from(rate.burst),
                                &tool,
                                &tool_rate,
                                &tool_burst,
                            ],
                        )
                        .await?;
                    Ok(row.get::<_, f64>(0))
                })
            })
            .await;
        match answered {
            Ok(wait) if wait > 0.0 => Ok(Err(Duration::from_secs_f64(wait))),
            Ok(_) => Ok(Ok(())),
            Err(error) => {
                tracing::warn!(%error, "the shared rate buckets did not answer: this replica's own share applies");
                Err(self.database.replicas())
            }
        }
    }
}
