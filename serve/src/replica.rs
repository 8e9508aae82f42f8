//! MCP sessions that say which replica holds them.
//!
//! A session lives in one process's memory, so behind a load balancer every
//! request of a session must reach the replica that opened it. With
//! `replica_id` set in the serve config, each session id this process hands
//! out is `<replica_id>.<random>`: a balancer routes a request carrying
//! `Mcp-Session-Id` by that prefix (the README's nginx `map`), and spreads
//! requests without one (new sessions, stateless calls) over every replica.
//! A request whose session id names another replica is answered like any
//! unknown session (404), so the client opens a new one.

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use std::pin::Pin;
use std::sync::Arc;

/// The process-local session manager, its ids tagged with this replica.
pub struct ReplicaSessions {
    local: LocalSessionManager,
    prefix: Option<String>,
}

impl ReplicaSessions {
    /// Sessions kept by `local`; ids prefixed with `replica_id.` when set.
    pub fn new(local: LocalSessionManager, replica_id: Option<&str>) -> Self {
        Self { local, prefix: replica_id.map(|id| format!("{id}.")) }
    }

    /// How many sessions are open.
    pub async fn open(&self) -> usize {
        self.local.sessions.read().await.len()
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
        Ok((self.tagged(id), transport))
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
        self.local.close_session(&self.local_id(id)?).await
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

    #[test]
    fn ids_carry_the_replica_and_another_replicas_ids_are_not_found_here() {
        let sessions = ReplicaSessions::new(LocalSessionManager::default(), Some("a"));
        assert_eq!(&*sessions.tagged("123".into()), "a.123");
        assert_eq!(&*sessions.local_id(&"a.123".into()).unwrap(), "123");
        assert!(matches!(
            sessions.local_id(&"b.123".into()),
            Err(LocalSessionManagerError::SessionNotFound(id)) if &*id == "b.123"
        ));
        let untagged = ReplicaSessions::new(LocalSessionManager::default(), None);
        assert_eq!(&*untagged.tagged("123".into()), "123");
        assert_eq!(&*untagged.local_id(&"b.123".into()).unwrap(), "b.123");
    }
}
