//! A future run where it is awaited that, dropped before its end,
//! finishes in a task of its own.
//!
//! A call must run to its end whoever waits for it: a client that goes
//! away mid-call must not cut short a guarded step's recording, its
//! count, its log or its permit's release. Spawning every call in a task
//! of its own gives that, at the price of a trip through the scheduler
//! for every call: the task queued, another worker woken to steal it, its
//! answer handed back through a join handle (0 to 25 µs a call at p50
//! in alternating runs here: docs/performance.md, "Stop 50"). Most
//! clients wait for their answer, so the call runs inline, in the
//! request's own task; only when that task drops it (hyper drops a
//! request's future when its connection closes) is what is left of it
//! moved into a task of its own and polled to its end there.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// `future`, polled where it is awaited, handed to the runtime if dropped
/// unfinished.
pub(crate) struct FinishOnDrop<F>
where
    F: Future<Output: Send + 'static> + Send + 'static,
{
    future: Option<Pin<Box<F>>>,
}

impl<F> FinishOnDrop<F>
where
    F: Future<Output: Send + 'static> + Send + 'static,
{
    pub(crate) fn new(future: F) -> Self {
        Self { future: Some(Box::pin(future)) }
    }
}

impl<F> Future for FinishOnDrop<F>
where
    F: Future<Output: Send + 'static> + Send + 'static,
{
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<F::Output> {
        // `Pin<Box<F>>` is `Unpin`, so `Self` is: no projection needed.
        let Some(future) = self.future.as_mut() else {
            panic!("FinishOnDrop polled after its end");
        };
        let output = std::task::ready!(future.as_mut().poll(context));
        self.future = None;
        Poll::Ready(output)
    }
}

impl<F> Drop for FinishOnDrop<F>
where
    F: Future<Output: Send + 'static> + Send + 'static,
{
    fn drop(&mut self) {
        let Some(future) = self.future.take() else { return };
        // Dropped outside a runtime (the runtime itself shutting down),
        // the future goes with it, as a spawned one would.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(future);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn awaited_it_answers_where_it_is_awaited() {
        assert_eq!(FinishOnDrop::new(async { 7 }).await, 7);
    }

    #[tokio::test]
    async fn dropped_unfinished_it_still_runs_to_its_end() {
        let finished = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&finished);
        let call = FinishOnDrop::new(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            flag.store(true, Ordering::SeqCst);
        });
        // The waiter gives up (a client gone) after the call started.
        let gave_up = tokio::time::timeout(Duration::from_millis(5), call).await;
        assert!(gave_up.is_err());
        assert!(!finished.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(finished.load(Ordering::SeqCst), "the dropped call never finished");
    }

    #[tokio::test]
    async fn finished_it_hands_nothing_on_when_dropped() {
        let mut call = FinishOnDrop::new(async { 7 });
        assert_eq!((&mut call).await, 7);
        // A finished future moved on would be polled again in its task.
        assert!(call.future.is_none(), "a finished call is still held");
    }
}
