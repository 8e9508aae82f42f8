//! A fair share for every credential: what one credential may hold of
//! the server's shared bounds, and how fast it may call.
//!
//! The server's bounds (`max_sessions`, `max_connections`,
//! `max_in_flight_calls`) are shared by every tenant; without a share
//! each, one credential could hold all of them and lock the others out.
//! [`Tenants`] keeps, per credential id:
//! - the connections it holds (a connection is held by the first
//!   credential that authenticates on it), at most
//!   `limits.max_connections_per_credential`;
//! - its calls in flight, at most `limits.max_in_flight_calls_per_credential`;
//! - its validations judged or waiting for a place, at most
//!   `limits.max_validations_per_credential`;
//! - the KiB its request bodies on their way announce, at most
//!   `limits.max_request_bodies_kib_per_credential`;
//! - two kinds of token bucket ([`Bucket`]): one for all its calls, one
//!   per tool that `[rate_limits.tools]` names. With a shared database
//!   the buckets are the database's ([`cluster`]), one per credential over
//!   every replica; a replica that cannot reach it falls back to buckets
//!   of its own, each a 1/N share (N: the replicas it last saw beating).
//!
//! Its sessions (both kinds) are counted by the ledger, over every replica
//! sharing it ([`crate::sessions`]); calls in flight, connections,
//! validations and bodies on their way bound one process's memory and
//! stay per replica.
//!
//! Entries are dropped once a credential holds nothing and its buckets
//! are full again, so the map stays as small as the set of active
//! credentials. Nothing here names a tenant in a log line or a metric.

pub mod cluster;

use crate::auth::Principal;
use crate::config::{Limits, Rate, RateLimits};
use crate::database::Database;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A token bucket: `rate.burst` calls at once, refilled at
/// `rate.calls_per_second`.
#[derive(Clone, Debug)]
pub struct Bucket {
    rate: Rate,
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    /// A full bucket.
    pub fn new(rate: Rate, now: Instant) -> Self {
        Self { rate, tokens: f64::from(rate.burst), updated: now }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate.calls_per_second).min(f64::from(self.rate.burst));
        self.updated = now;
    }

    /// How long until one call is allowed; `None` when it is now.
    pub fn wait(&mut self, now: Instant) -> Option<Duration> {
        self.refill(now);
        (self.tokens < 1.0).then(|| Duration::from_secs_f64((1.0 - self.tokens) / self.rate.calls_per_second))
    }

    /// Take one call's token (after [`Bucket::wait`] said `None`).
    pub fn take(&mut self) {
        self.tokens -= 1.0;
    }

    /// Whether the bucket is full (forgetting it changes nothing).
    pub fn is_full(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= f64::from(self.rate.burst)
    }

    /// The rate it was made with.
    pub fn rate(&self) -> Rate {
        self.rate
    }
}

/// What one credential holds.
struct Share {
    connections: u32,
    calls: Arc<Semaphore>,
    validations: Arc<Semaphore>,
    bodies: Arc<Semaphore>,
    bucket: Option<Bucket>,
    tools: HashMap<String, Bucket>,
}

/// Why a credential's request was refused by its share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverShare {
    /// It holds `max_connections_per_credential` connections.
    Connections,
}

/// Every credential's share of the server.
pub struct Tenants {
    limits: Limits,
    rates: RateLimits,
    shares: Mutex<HashMap<String, Share>>,
    /// The buckets every replica shares, when a database is.
    cluster: Option<cluster::ClusterBuckets>,
}

impl Tenants {
    /// Shares under `limits`, calls limited by `rates`, in buckets of this
    /// process.
    pub fn new(limits: Limits, rates: RateLimits) -> Self {
        Self { limits, rates, shares: Mutex::new(HashMap::new()), cluster: None }
    }

    /// Shares under `limits`, calls limited by `rates` in the buckets of
    /// `database` when given (every replica sharing it draws on them).
    pub fn shared(limits: Limits, rates: RateLimits, database: Option<Arc<Database>>) -> Self {
        Self { cluster: database.map(cluster::ClusterBuckets::new), ..Self::new(limits, rates) }
    }

    fn shares(&self) -> MutexGuard<'_, HashMap<String, Share>> {
        self.shares.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn share<'a>(&self, shares: &'a mut HashMap<String, Share>, id: &str) -> &'a mut Share {
        // The id is copied only for a new entry (`entry` takes an owned
        // key, so it allocated on every request).
        if !shares.contains_key(id) {
            shares.insert(
                id.to_owned(),
                Share {
                    connections: 0,
                    calls: Arc::new(Semaphore::new(self.limits.max_in_flight_calls_per_credential as usize)),
                    validations: Arc::new(Semaphore::new(
                        self.limits.max_validations_per_credential as usize,
                    )),
                    bodies: Arc::new(Semaphore::new(
                        self.limits.max_request_bodies_kib_per_credential as usize,
                    )),
                    bucket: None,
                    tools: HashMap::new(),
                },
            );
        }
        shares.get_mut(id).expect("the entry is there: found or inserted above, under the same lock")
    }

    /// Forget `id`'s entry when it holds nothing and its buckets are full.
    fn settle(&self, shares: &mut HashMap<String, Share>, id: &str) {
        let now = Instant::now();
        let Some(share) = shares.get_mut(id) else { return };
        // Only the map holds the semaphores: no call or validation holds
        // or awaits a permit of them (a permit holds its semaphore too).
        let idle = share.connections == 0
            && Arc::strong_count(&share.calls) == 1
            && Arc::strong_count(&share.validations) == 1
            && Arc::strong_count(&share.bodies) == 1
            && share.bucket.as_mut().is_none_or(|bucket| bucket.is_full(now))
            && share.tools.values_mut().all(|bucket| bucket.is_full(now));
        if idle {
            shares.remove(id);
        }
    }

    /// Hold a connection for credential `id`, released when the guard drops.
    pub fn hold_connection(self: &Arc<Self>, id: &str) -> Result<ConnectionHold, OverShare> {
        let mut shares = self.shares();
        let share = self.share(&mut shares, id);
        if share.connections >= self.limits.max_connections_per_credential {
            return Err(OverShare::Connections);
        }
        share.connections += 1;
        Ok(ConnectionHold { tenants: Arc::clone(self), id: id.to_owned() })
    }

    /// The semaphore bounding `id`'s calls in flight.
    pub fn calls(&self, id: &str) -> Arc<Semaphore> {
        let mut shares = self.shares();
        Arc::clone(&self.share(&mut shares, id).calls)
    }

    /// Hand back a permit of one of credential `id`'s semaphores (a call,
    /// a validation's turn, a body's KiB) by dropping it, and forget the
    /// credential if it now holds nothing.
    pub fn give_back(&self, id: &str, permit: OwnedSemaphorePermit) {
        drop(permit);
        self.settle(&mut self.shares(), id);
    }

    /// Forget credential `id` if it holds nothing (after a wait for one
    /// of its semaphores gave up).
    pub fn forget_if_idle(&self, id: &str) {
        self.settle(&mut self.shares(), id);
    }

    /// Take `kib` of credential `id`'s share of request bodies on their
    /// way, or `None` when it holds too much already; give it back with
    /// [`Tenants::give_back`].
    pub fn take_body(&self, id: &str, kib: u32) -> Option<OwnedSemaphorePermit> {
        let mut shares = self.shares();
        let taken = Arc::clone(&self.share(&mut shares, id).bodies).try_acquire_many_owned(kib).ok();
        if taken.is_none() {
            self.settle(&mut shares, id);
        }
        taken
    }

    /// The semaphore bounding `id`'s validations judged or waiting for a
    /// place; give its permit back with [`Tenants::give_back`].
    pub fn validations(&self, id: &str) -> Arc<Semaphore> {
        let mut shares = self.shares();
        Arc::clone(&self.share(&mut shares, id).validations)
    }

    /// Let one call of `tool` by `principal` through its buckets, or say
    /// how long until it may: the credential's bucket, and the tool's
    /// when `[rate_limits.tools]` names it. A refused call takes no
    /// token from either. With a shared database this is one round trip
    /// to it (none that waits on its disk); a replica that cannot reach
    /// it uses its own buckets, each a 1/N share.
    pub async fn admit_call(&self, principal: &Principal, tool: &str) -> Result<(), Duration> {
        if !self.rates.enabled {
            return Ok(());
        }
        let rate = principal.rate.unwrap_or_else(|| self.rates.credential());
        let tool_rate = self.rates.tools.get(tool).copied();
        let Some(cluster) = &self.cluster else {
            return self.admit_here(&principal.id, tool, rate, tool_rate);
        };
        match cluster.admit(&principal.id, tool, rate, tool_rate).await {
            Ok(admitted) => admitted,
            Err(replicas) => {
                let share = |rate: Rate| Rate {
                    calls_per_second: rate.calls_per_second / f64::from(replicas),
                    burst: (rate.burst / replicas).max(1),
                };
                self.admit_here(&principal.id, tool, share(rate), tool_rate.map(share))
            }
        }
    }

    /// [`Tenants::admit_call`] in this process's buckets.
    fn admit_here(&self, id: &str, tool: &str, rate: Rate, tool_rate: Option<Rate>) -> Result<(), Duration> {
        let now = Instant::now();
        let mut shares = self.shares();
        let share = self.share(&mut shares, id);
        let bucket = match &mut share.bucket {
            Some(bucket) if bucket.rate() == rate => bucket,
            slot => slot.insert(Bucket::new(rate, now)),
        };
        let mut wait = bucket.wait(now);
        if let Some(tool_rate) = tool_rate {
            let tool_bucket = match share.tools.get_mut(tool) {
                Some(bucket) if bucket.rate() == tool_rate => bucket,
                _ => share.tools.entry(tool.to_owned()).insert_entry(Bucket::new(tool_rate, now)).into_mut(),
            };
            wait = wait.max(tool_bucket.wait(now));
        }
        if let Some(wait) = wait {
            return Err(wait);
        }
        if let Some(bucket) = &mut share.bucket {
            bucket.take();
        }
        if let Some(tool_bucket) = share.tools.get_mut(tool) {
            tool_bucket.take();
        }
        Ok(())
    }

    /// How many credentials have an entry (for tests: the map stays small).
    pub fn tracked(&self) -> usize {
        self.shares().len()
    }
}

/// A connection held by a credential; released on drop.
pub struct ConnectionHold {
    tenants: Arc<Tenants>,
    id: String,
}

impl Drop for ConnectionHold {
    fn drop(&mut self) {
        let mut shares = self.tenants.shares();
        if let Some(share) = shares.get_mut(&self.id) {
            share.connections = share.connections.saturating_sub(1);
        }
        self.tenants.settle(&mut shares, &self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(id: &str) -> Principal {
        Principal { id: id.into(), workspace: Some("ws".into()), allow: Default::default(), rate: None }
    }

    #[test]
    fn a_bucket_lets_its_burst_through_then_says_when_the_next_call_may_come() {
        let start = Instant::now();
        let mut bucket = Bucket::new(Rate { calls_per_second: 2.0, burst: 3 }, start);
        for _ in 0..3 {
            assert_eq!(bucket.wait(start), None);
            bucket.take();
        }
        let wait = bucket.wait(start).expect("the burst is spent");
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        assert_eq!(bucket.wait(start + Duration::from_millis(500)), None);
        assert!(!bucket.is_full(start + Duration::from_millis(500)));
        assert!(bucket.is_full(start + Duration::from_secs(10)), "refills up to its burst, no further");
    }

    /// `future`, run to its end here (the local buckets never wait).
    fn now<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(future)
    }

    #[test]
    fn one_credential_past_its_rate_does_not_slow_another_and_a_tool_has_its_own_bucket() {
        let mut rates = RateLimits { calls_per_second: 1.0, burst: 2, ..RateLimits::default() };
        rates.tools.insert("slow_tool".into(), Rate { calls_per_second: 0.5, burst: 1 });
        let tenants = Tenants::new(Limits::default(), rates);
        let (a, b) = (principal("token:a"), principal("token:b"));
        let admit = |principal: &Principal, tool: &str| now(tenants.admit_call(principal, tool));
        assert!(admit(&a, "t").is_ok() && admit(&a, "t").is_ok());
        let wait = admit(&a, "t").unwrap_err();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1), "{wait:?}");
        assert!(admit(&b, "t").is_ok(), "another credential has its own bucket");
        assert!(admit(&b, "slow_tool").is_ok());
        let wait = admit(&b, "slow_tool").unwrap_err();
        assert!(wait > Duration::from_millis(1900), "the tool's bucket binds: {wait:?}");
        let own =
            Principal { rate: Some(Rate { calls_per_second: 100.0, burst: 50 }), ..principal("token:c") };
        for _ in 0..50 {
            assert!(admit(&own, "t").is_ok(), "a credential's own rate replaces the default");
        }
        let off = Tenants::new(Limits::default(), RateLimits { enabled: false, ..RateLimits::default() });
        for _ in 0..1000 {
            assert!(now(off.admit_call(&a, "t")).is_ok());
        }
    }

    #[test]
    fn connections_are_bounded_per_credential_and_forgotten_when_released() {
        let limits = Limits { max_connections_per_credential: 1, ..Limits::default() };
        let tenants = Arc::new(Tenants::new(limits, RateLimits { enabled: false, ..RateLimits::default() }));
        let held = tenants.hold_connection("token:a").unwrap();
        assert!(matches!(tenants.hold_connection("token:a"), Err(OverShare::Connections)));
        assert!(tenants.hold_connection("token:b").is_ok(), "dropped at once, released");
        drop(held);
        assert!(tenants.hold_connection("token:a").is_ok());
        assert_eq!(tenants.tracked(), 0, "credentials holding nothing are forgotten");
    }
}
