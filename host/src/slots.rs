//! [`CallSlots`]: the gate every sandboxed call passes, at most
//! `limits.max_calls` at once.
//!
//! One gate may serve several hosts: a server that swaps in a new plugin
//! set (a hot reload) builds the new host on the old one's slots
//! ([`crate::HostBuilder::call_slots`]), so calls still running on the
//! old set and calls on the new one draw from one bound, and a drain
//! waits for both.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The call slots of one or more hosts. Cloning gives the same gate.
#[derive(Clone)]
pub struct CallSlots {
    gate: Arc<Semaphore>,
    size: u32,
}

impl std::fmt::Debug for CallSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallSlots").field("size", &self.size).field("in_flight", &self.in_flight()).finish()
    }
}

impl CallSlots {
    /// A new gate of `size` slots.
    pub fn new(size: u32) -> Self {
        Self { gate: Arc::new(Semaphore::new(size as usize)), size }
    }

    /// How many calls may run at once.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// How many slots are held now (calls running, or a drain's hold).
    pub fn in_flight(&self) -> u32 {
        let free = u32::try_from(self.gate.available_permits()).unwrap_or(self.size);
        self.size.saturating_sub(free)
    }

    /// Whether `other` is this same gate (not merely one of the same size).
    pub fn same_gate(&self, other: &CallSlots) -> bool {
        Arc::ptr_eq(&self.gate, &other.gate)
    }

    /// A slot now, if one is free. It owns its place in the gate, so the
    /// call's store can carry it to wherever the store is dropped.
    pub(crate) fn try_acquire(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.gate).try_acquire_owned().ok()
    }

    /// A slot once one frees (the gate is fair: first come, first served).
    pub(crate) async fn acquire(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.gate).acquire_owned().await.ok()
    }

    /// Wait until no call holds a slot, or `timeout` passes; true when
    /// idle. Calls arriving meanwhile wait behind the drain (the gate is
    /// fair), so a server stopping uses this last.
    pub async fn drained(&self, timeout: Duration) -> bool {
        matches!(tokio::time::timeout(timeout, self.gate.acquire_many(self.size)).await, Ok(Ok(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_bound_and_the_drain_waits_for_either() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let slots = CallSlots::new(1);
        let shared = slots.clone();
        let held = slots.try_acquire().unwrap();
        assert!(shared.try_acquire().is_none(), "the clone's one slot is the one held");
        assert_eq!(shared.in_flight(), 1);
        assert!(!runtime.block_on(shared.drained(Duration::ZERO)), "not idle while a call holds a slot");
        drop(held);
        assert!(runtime.block_on(shared.drained(Duration::ZERO)));
        assert!(shared.same_gate(&slots) && !CallSlots::new(1).same_gate(&slots));
    }
}
