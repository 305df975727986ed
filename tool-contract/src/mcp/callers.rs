//! Flow records for requests that belong to no MCP session: 2026-07-28 over HTTP, where each
//! request stands alone.
//!
//! Without a record spanning calls, a value the model copied out of one result into the next
//! call would not be traced, and flow control would silently be off for those clients. So such
//! requests share one record per caller, keyed by the principal and tenant the host's context
//! names. A caller's concurrent conversations share it, which only traces more (a value seen
//! in either counts as observed): stricter, never looser. The records are bounded like
//! sessions: at most [`MAX_CALLERS`], the oldest dropped first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use std::sync::Arc;

use crate::context::ToolContext;
use crate::flow::{Session, SessionLimits};
use crate::repair::RepairLoop;

/// Callers with a record; as many as the HTTP endpoint's default session cap.
pub(super) const MAX_CALLERS: usize = super::DEFAULT_MAX_SESSIONS;

type Caller = (Option<String>, Option<String>);

#[derive(Default)]
pub(super) struct CallerRecords {
    state: Mutex<Records>,
}

#[derive(Default)]
struct Records {
    by_caller: HashMap<Caller, Session>,
    /// Callers, oldest record first.
    order: VecDeque<Caller>,
    /// Each caller's repair counts per tool, bounded like the flow records.
    repairs: HashMap<Caller, Arc<Mutex<RepairLoop>>>,
    /// Callers with repair counts, oldest first.
    repair_order: VecDeque<Caller>,
}

fn caller_of(ctx: &ToolContext) -> Caller {
    (
        ctx.principal().map(|p| p.as_str().to_owned()),
        ctx.tenant().map(|t| t.as_str().to_owned()),
    )
}

impl CallerRecords {
    /// The record of the caller `ctx` names, made with `limits` if it has none yet.
    pub(super) fn record(&self, ctx: &ToolContext, limits: SessionLimits) -> Session {
        let caller = caller_of(ctx);
        let mut records = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = records.by_caller.get(&caller) {
            return session.clone();
        }
        while records.by_caller.len() >= MAX_CALLERS {
            let Some(oldest) = records.order.pop_front() else {
                break;
            };
            records.by_caller.remove(&oldest);
        }
        let session = Session::with_limits(limits);
        records.by_caller.insert(caller.clone(), session.clone());
        records.order.push_back(caller);
        session
    }

    /// The repair counts of the caller `ctx` names, so the repair bound holds across requests
    /// that belong to no session.
    pub(super) fn repairs(&self, ctx: &ToolContext, max_repairs: u32) -> Arc<Mutex<RepairLoop>> {
        let caller = caller_of(ctx);
        let mut records = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(repairs) = records.repairs.get(&caller) {
            return Arc::clone(repairs);
        }
        while records.repairs.len() >= MAX_CALLERS {
            let Some(oldest) = records.repair_order.pop_front() else {
                break;
            };
            records.repairs.remove(&oldest);
        }
        let repairs = Arc::new(Mutex::new(RepairLoop::new(max_repairs)));
        records.repairs.insert(caller.clone(), Arc::clone(&repairs));
        records.repair_order.push_back(caller);
        repairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(principal: &str) -> ToolContext {
        ToolContext::builder()
            .principal(principal)
            .tenant("acme")
            .build()
    }

    #[test]
    fn each_caller_keeps_one_record_and_the_oldest_goes_first() {
        let records = CallerRecords::default();
        let limits = SessionLimits::default();
        let kim = records.record(&caller("kim"), limits);
        kim.add_trusted_value("kim@acme.test");
        let again = records.record(&caller("kim"), limits);
        assert_eq!(again.to_json(), kim.to_json(), "the same record");
        let lee = records.record(&caller("lee"), limits);
        assert_ne!(
            lee.to_json(),
            kim.to_json(),
            "another caller, another record"
        );
        for i in 0..MAX_CALLERS {
            records.record(&caller(&format!("user{i}")), limits);
        }
        let kim_now = records.record(&caller("kim"), limits);
        assert_ne!(
            kim_now.to_json(),
            kim.to_json(),
            "the oldest record was dropped"
        );
        assert!(records.state.lock().unwrap().by_caller.len() <= MAX_CALLERS);
    }
}
