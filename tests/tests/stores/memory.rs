//! The in-memory backend. "Down" is a store that answers every call with an error, since
//! memory cannot become unreachable.

use async_trait::async_trait;
use tool_contract::store::{
    ApprovalStore, Claim, ClaimRequest, IdempotencyStore, MemoryStore, StoreError,
};

use crate::conformance::Backend;

pub struct Memory;

/// A store whose backend is gone.
pub struct Unreachable;

#[async_trait]
impl IdempotencyStore for Unreachable {
    async fn claim(&self, _: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn complete(&self, _: &str, _: &str, _: &str, _: u64) -> Result<bool, StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn release(&self, _: &str, _: &str) -> Result<(), StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn purge_expired(&self, _: u64) -> Result<u64, StoreError> {
        Err(StoreError::new("unreachable"))
    }
}

#[async_trait]
impl ApprovalStore for Unreachable {
    async fn consume_grant(&self, _: &str, _: u64, _: u64) -> Result<bool, StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn purge_consumed_grants(&self, _: u64) -> Result<u64, StoreError> {
        Err(StoreError::new("unreachable"))
    }
}

impl Backend for Memory {
    type Store = MemoryStore;
    type Down = Unreachable;
    const NAME: &'static str = "memory";
    async fn fresh(&self) -> Option<MemoryStore> {
        Some(MemoryStore::new())
    }
    async fn down(&self) -> Option<Unreachable> {
        Some(Unreachable)
    }
}

conformance_tests!(Memory);
