//! MCP sessions that say which replica holds them and which credential
//! owns them.
//!
//! Ownership: a session is created while its `initialize` runs, inside
//! [`SessionOwners::opening`], which names the principal that sent it;
//! [`ReplicaSessions::create_session`] records that principal as the
//! owner in the same step, and `close_session` (a `DELETE`, the idle
//! timeout, shutdown) forgets it and gives its place in the share back
//! to the ledger ([`GuardedSessions::give_back_place`]). The HTTP layer checks every request carrying `Mcp-Session-Id`
//! against [`SessionOwners::owner`] before the SDK sees it; a session
//! with no recorded owner belongs to nobody.
//!
//! A session lives in one process's memory, so behind a load balancer every
//! request of a session must reach the replica that opened it. With
//! `replica_id` set in the serve config, each session id this process hands
//! out is `<replica_id>.<random>`: a balancer routes a request carrying
//! `Mcp-Session-Id` by that prefix (the README's nginx `map`), and spreads
//! requests without one (new sessions, stateless calls) over every replica.
//! A request whose session id names another replica is answered like any
//! unknown session (404), so the client opens a new one.

use crate::auth::Principal;
use crate::sessions::GuardedSessions;
use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

tokio::task_local! {
    /// The principal whose `initialize` is being handled on this task.
    static OPENING: Arc<Opening>;
}

/// An `initialize` in progress: who sent it, the place reserved for its
/// session, and whether it made one.
pub struct Opening {
    principal: Principal,
    place: String,
    created: AtomicBool,
}

/// Which principal owns each open session (every route's), by the id the
/// client sees, and the place each holds in the share.
pub struct SessionOwners {
    owners: Mutex<HashMap<String, (Principal, String)>>,
    sessions: Arc<GuardedSessions>,
}

impl SessionOwners {
    /// No session yet; places are given back to `sessions`' ledger.
    pub fn new(sessions: Arc<GuardedSessions>) -> Self {
        Self { owners: Mutex::new(HashMap::new()), sessions }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Principal, String)>> {
        self.owners.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The owner of session `id`, if it is open.
    pub fn owner(&self, id: &str) -> Option<Principal> {
        self.owners().get(id).map(|(principal, _)| principal.clone())
    }

    /// Run an `initialize` of `principal`, for which `place` is reserved:
    /// a session it creates is owned by `principal` and holds the place;
    /// when it creates none, the place is given back.
    pub async fn opening<F: Future>(&self, principal: Principal, place: String, handshake: F) -> F::Output {
        let opening = Arc::new(Opening { principal, place, created: AtomicBool::new(false) });
        let output = OPENING.scope(Arc::clone(&opening), handshake).await;
        if !opening.created.load(Ordering::SeqCst) {
            self.sessions.give_back_place(&opening.place).await;
        }
        output
    }

    fn created(&self, id: &SessionId) {
        let recorded = OPENING.try_with(|opening| {
            opening.created.store(true, Ordering::SeqCst);
            self.owners().insert(id.to_string(), (opening.principal.clone(), opening.place.clone()));
        });
        if recorded.is_err() {
            // Only an `initialize` through the HTTP layer creates sessions.
            tracing::error!("a session was created outside an initialize; it has no owner and is refused");
        }
    }

    async fn closed(&self, id: &SessionId) {
        let closed = self.owners().remove(&**id);
        if let Some((_, place)) = closed {
            self.sessions.give_back_place(&place).await;
        }
    }
}

/// The process-local session manager, its ids tagged with this replica
/// and their owners recorded.
pub struct ReplicaSessions {
    local: LocalSessionManager,
    prefix: Option<String>,
    owners: Arc<SessionOwners>,
}

impl ReplicaSessions {
    /// Sessions kept by `local`; ids prefixed with `replica_id.` when set;
    /// owners in `owners`.
    pub fn new(local: LocalSessionManager, replica_id: Option<&str>, owners: Arc<SessionOwners>) -> Self {
        Self { local, prefix: replica_id.map(|id| format!("{id}.")), owners }
    }

    fn tagged(&self, local: SessionId) -> SessionId {
        match &self.prefix {
            Some(prefix) => format!("{prefix}{local}").into(),
            None => local,
        }
    }

    /// The local id behind a client's session id; an id of another replica
    /// is not found here.
    fn local_id(&self, id: &SessionId) -> Result<SessionId, LocalSessionManagerError> {
        match &self.prefix {
            None => Ok(id.clone()),
            Some(prefix) => id
                .strip_prefix(prefix.as_str())
                .map(SessionId::from)
                .ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone())),
        }
    }
}

/// A session's stream, detached from the local id it was asked for with
/// (the SDK's streams are `'static` but their types name that borrow).
type SessionStream = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync + 'static>>;

fn boxed(stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static) -> SessionStream {
    Box::pin(stream)
}

impl SessionManager for ReplicaSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        let id = self.tagged(id);
        self.owners.created(&id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(&self.local_id(id)?, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        match self.local_id(id) {
            Ok(local) => self.local.has_session(&local).await,
            Err(_) => Ok(false),
        }
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.local.close_session(&self.local_id(id)?).await;
        self.owners.closed(id).await;
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let local = self.local_id(id)?;
        Ok(boxed(self.local.create_stream(&local, message).await?))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.local.accept_message(&self.local_id(id)?, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let local = self.local_id(id)?;
        Ok(boxed(self.local.create_standalone_stream(&local).await?))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let local = self.local_id(id)?;
        Ok(boxed(self.local.resume(&local, last_event_id).await?))
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        match self.local_id(&id) {
            Ok(local) => self.local.restore_session(local).await,
            Err(_) => Ok(RestoreOutcome::NotSupported),
        }
    }

    fn event_store(&self) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.local.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guarded() -> Arc<GuardedSessions> {
        let limits = crate::config::Limits::default();
        Arc::new(GuardedSessions::new(&Default::default(), &limits, "test").unwrap())
    }

    fn owners() -> Arc<SessionOwners> {
        Arc::new(SessionOwners::new(guarded()))
    }

    #[test]
    fn ids_carry_the_replica_and_another_replicas_ids_are_not_found_here() {
        let sessions = ReplicaSessions::new(LocalSessionManager::default(), Some("a"), owners());
        assert_eq!(&*sessions.tagged("123".into()), "a.123");
        assert_eq!(&*sessions.local_id(&"a.123".into()).unwrap(), "123");
        assert!(matches!(
            sessions.local_id(&"b.123".into()),
            Err(LocalSessionManagerError::SessionNotFound(id)) if &*id == "b.123"
        ));
        let untagged = ReplicaSessions::new(LocalSessionManager::default(), None, owners());
        assert_eq!(&*untagged.tagged("123".into()), "123");
        assert_eq!(&*untagged.local_id(&"b.123".into()).unwrap(), "b.123");
    }

    #[tokio::test]
    async fn a_session_is_owned_by_the_principal_whose_initialize_made_it_and_its_place_given_back_when_closed()
     {
        let guarded = guarded();
        let owners = Arc::new(SessionOwners::new(Arc::clone(&guarded)));
        let sessions = ReplicaSessions::new(LocalSessionManager::default(), None, Arc::clone(&owners));
        let alice =
            Principal { id: "token:a".into(), workspace: None, allow: Default::default(), rate: None };
        let place = guarded.reserve_place(&alice).await.unwrap();
        let (id, _transport) = owners.opening(alice.clone(), place, sessions.create_session()).await.unwrap();
        assert_eq!(owners.owner(&id), Some(alice.clone()));
        assert_eq!(guarded.live("token:a").await.unwrap().per_credential, 1);
        sessions.close_session(&id).await.unwrap();
        assert_eq!(owners.owner(&id), None);
        assert_eq!(guarded.live("token:a").await.unwrap().per_credential, 0, "closing gives the place back");
        let place = guarded.reserve_place(&alice).await.unwrap();
        owners.opening(alice, place, async {}).await;
        assert_eq!(
            guarded.live("token:a").await.unwrap().per_credential,
            0,
            "an initialize that made no session gives its place back"
        );
        let (orphan, _transport) = sessions.create_session().await.unwrap();
        assert_eq!(owners.owner(&orphan), None, "a session made outside an initialize belongs to nobody");
    }
}
