//! A cap on live MCP sessions, total and per client address, around rmcp's in-memory session
//! manager.
//!
//! rmcp expires idle sessions itself but never refuses one, so every `initialize` would grow
//! the server. [`CappedSessions`] counts a slot for each live session and releases it when the
//! session closes, whether by a client's `DELETE`, idle expiry or shutdown (rmcp's session
//! worker calls [`SessionManager::close_session`] when it ends).
//!
//! The HTTP layer knows the client's address and can answer a refusal with a proper status, so
//! it reserves the slot *before* handing the request to rmcp and leaves it in a task-local for
//! [`CappedSessions::create_session`] to take. Without a reservation (a service mounted in
//! another router) the total cap is checked there, and a refusal shows as rmcp's error status.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// Why a new session was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server holds its maximum number of live sessions.
    Total,
    /// This client address holds its maximum number of live sessions.
    PerClient,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_client: HashMap<IpAddr, usize>,
}

/// The counters behind the caps; shared by the HTTP layer and the session manager.
#[derive(Debug)]
pub(crate) struct SessionSlots {
    max_total: usize,
    max_per_client: usize,
    counts: Mutex<Counts>,
}

impl SessionSlots {
    pub(crate) fn new(max_total: usize, max_per_client: usize) -> Arc<Self> {
        Arc::new(SessionSlots {
            max_total,
            max_per_client,
            counts: Mutex::new(Counts::default()),
        })
    }

    pub(crate) fn max_total(&self) -> usize {
        self.max_total
    }

    pub(crate) fn max_per_client(&self) -> usize {
        self.max_per_client
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        // The counters stay consistent under every panic point (plain integer updates).
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a slot for a new session of `client` (unknown: only the total cap applies).
    pub(crate) fn reserve(self: &Arc<Self>, client: Option<IpAddr>) -> Result<Slot, Refusal> {
        let mut counts = self.counts();
        if counts.total >= self.max_total {
            return Err(Refusal::Total);
        }
        if let Some(ip) = client {
            let held = counts.per_client.entry(ip).or_insert(0);
            if *held >= self.max_per_client {
                return Err(Refusal::PerClient);
            }
            *held += 1;
        }
        counts.total += 1;
        Ok(Slot {
            slots: Arc::clone(self),
            client,
        })
    }
}

/// One live (or about to be created) session's place under the caps; dropping it frees it.
#[derive(Debug)]
pub(crate) struct Slot {
    slots: Arc<SessionSlots>,
    client: Option<IpAddr>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.slots.counts();
        counts.total -= 1;
        if let Some(ip) = self.client {
            if let Some(held) = counts.per_client.get_mut(&ip) {
                *held -= 1;
                if *held == 0 {
                    // Keeps the map as small as the set of clients holding sessions.
                    counts.per_client.remove(&ip);
                }
            }
        }
    }
}

tokio::task_local! {
    /// The slot the HTTP layer reserved for the request being handled, if it may create a session.
    pub(crate) static RESERVED: RefCell<Option<Slot>>;
}

/// The error of [`CappedSessions`]: rmcp's own, or a refused session.
#[derive(Debug)]
#[non_exhaustive]
pub enum CappedSessionsError {
    /// An error of rmcp's in-memory session manager.
    Local(LocalSessionManagerError),
    /// The server already holds its maximum number of live sessions.
    LimitReached,
}

impl std::fmt::Display for CappedSessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CappedSessionsError::Local(err) => err.fmt(f),
            CappedSessionsError::LimitReached => f.write_str("the live session limit is reached"),
        }
    }
}

impl std::error::Error for CappedSessionsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CappedSessionsError::Local(err) => Some(err),
            CappedSessionsError::LimitReached => None,
        }
    }
}

impl From<LocalSessionManagerError> for CappedSessionsError {
    fn from(err: LocalSessionManagerError) -> Self {
        CappedSessionsError::Local(err)
    }
}

/// rmcp's [`LocalSessionManager`] under a cap on live sessions (see
/// [`HttpConfig::max_sessions`](super::HttpConfig::max_sessions)).
#[derive(Debug)]
pub struct CappedSessions {
    inner: LocalSessionManager,
    slots: Arc<SessionSlots>,
    live: Mutex<HashMap<SessionId, Slot>>,
}

impl CappedSessions {
    pub(crate) fn new(inner: LocalSessionManager, slots: Arc<SessionSlots>) -> Self {
        CappedSessions {
            inner,
            slots,
            live: Mutex::new(HashMap::new()),
        }
    }

    /// How many sessions are live.
    pub fn live_sessions(&self) -> usize {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl SessionManager for CappedSessions {
    type Error = CappedSessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let reserved = RESERVED
            .try_with(|cell| cell.borrow_mut().take())
            .ok()
            .flatten();
        let slot = match reserved {
            Some(slot) => slot,
            None => self
                .slots
                .reserve(None)
                .map_err(|_| CappedSessionsError::LimitReached)?,
        };
        let (id, transport) = self.inner.create_session().await?;
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), slot);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let slot = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        let closed = self.inner.close_session(id).await;
        drop(slot);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
