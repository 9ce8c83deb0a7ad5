//! An engine operation's state as the gateway last saw it in the replies it forwarded, for the admin API's listing of operations.
//!
//! Why recorded rather than asked for when an administrator lists operations: the gateway
//! already carries every reply that tells an operation's state (the ExecuteStatement or
//! metadata reply that creates it, each GetOperationStatus its client polls, a
//! CancelOperation), so noting the state costs a small decode per status reply and no call of
//! its own. Asking each engine at listing time would cost a GetOperationStatus per open
//! operation, each held by the engine for its long-poll wait while the statement runs, and
//! queued behind the client's own call on the session's engine connection; a listing of many
//! operations, or of a hung engine, would wait for the slowest. The price is that an
//! operation whose client stopped polling keeps the state its client last heard.

use kumiho_thrift::cli::{TGetOperationStatusResp, TOperationState};
use kumiho_thrift::status;

use crate::session::now_ms;

/// What the replies last said of one operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub state: TOperationState,
    /// The engine's message, when the state is ERROR.
    pub error: Option<String>,
    /// When it started and completed, in milliseconds since the epoch; 0 when not known.
    pub started_ms: u64,
    pub completed_ms: u64,
}

/// The state of one engine operation, updated by the calls that forward its replies. A std
/// mutex, held to copy or assign only.
#[derive(Debug)]
pub struct ObservedState(std::sync::Mutex<Observed>);

impl ObservedState {
    /// An operation whose creating reply says `state`: FINISHED for a synchronous call (its
    /// reply comes once the work is done), RUNNING for a statement the engine took to run in
    /// the background, PENDING for one the gateway answered ahead of the engine.
    pub fn new(state: TOperationState) -> Self {
        let now = now_ms();
        let started_ms = match state {
            TOperationState::PENDING_STATE => 0,
            _ => now,
        };
        let completed_ms = if is_final(state) { now } else { 0 };
        Self(std::sync::Mutex::new(Observed {
            state,
            error: None,
            started_ms,
            completed_ms,
        }))
    }

    pub fn get(&self) -> Observed {
        self.observed().clone()
    }

    /// Notes a GetOperationStatus reply.
    pub fn note_status(&self, resp: &TGetOperationStatusResp) {
        let Some(state) = resp.operation_state.filter(|_| status::is_ok(&resp.status)) else {
            return;
        };
        let millis = |t: Option<i64>| t.filter(|t| *t > 0).map(|t| t as u64);
        let mut observed = self.observed();
        if is_final(observed.state) {
            return;
        }
        observed.state = state;
        if state == TOperationState::ERROR_STATE {
            observed.error = resp.error_message.clone();
        }
        if let Some(started) = millis(resp.operation_started) {
            observed.started_ms = started;
        } else if observed.started_ms == 0 && state != TOperationState::PENDING_STATE {
            observed.started_ms = now_ms();
        }
        if is_final(state) {
            observed.completed_ms = millis(resp.operation_completed).unwrap_or_else(now_ms);
        }
    }

    /// Notes that the engine took a CancelOperation: CANCELED, unless it had ended already.
    pub fn note_cancelled(&self) {
        let mut observed = self.observed();
        if !is_final(observed.state) {
            observed.state = TOperationState::CANCELED_STATE;
            observed.completed_ms = now_ms();
        }
    }

    fn observed(&self) -> std::sync::MutexGuard<'_, Observed> {
        // Holders copy or assign only: a panicking one leaves a whole value.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether no later status can change `state`.
pub fn is_final(state: TOperationState) -> bool {
    !matches!(
        state,
        TOperationState::INITIALIZED_STATE
            | TOperationState::RUNNING_STATE
            | TOperationState::PENDING_STATE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(state: TOperationState, error: Option<&str>) -> TGetOperationStatusResp {
        TGetOperationStatusResp {
            status: status::ok(),
            operation_state: Some(state),
            sql_state: None,
            error_code: None,
            error_message: error.map(str::to_owned),
            task_status: None,
            operation_started: Some(1_000),
            operation_completed: is_final(state).then_some(2_000),
            has_result_set: None,
            progress_update_response: None,
            num_modified_rows: None,
        }
    }

    #[test]
    fn polls_move_a_statement_on_until_it_ends_and_then_it_stays() {
        let observed = ObservedState::new(TOperationState::PENDING_STATE);
        assert_eq!(observed.get().state, TOperationState::PENDING_STATE);
        assert_eq!(
            observed.get().started_ms,
            0,
            "not started before the engine has it"
        );
        observed.note_status(&reply(TOperationState::RUNNING_STATE, None));
        assert_eq!(observed.get().state, TOperationState::RUNNING_STATE);
        observed.note_status(&reply(TOperationState::ERROR_STATE, Some("no table t")));
        let ended = observed.get();
        assert_eq!(
            (
                ended.state,
                ended.error.as_deref(),
                ended.started_ms,
                ended.completed_ms
            ),
            (
                TOperationState::ERROR_STATE,
                Some("no table t"),
                1_000,
                2_000
            )
        );
        observed.note_cancelled();
        observed.note_status(&reply(TOperationState::RUNNING_STATE, None));
        assert_eq!(
            observed.get(),
            ended,
            "an ended operation stays as it ended"
        );
    }

    #[test]
    fn a_failed_poll_changes_nothing_and_a_cancel_ends_a_running_statement() {
        let observed = ObservedState::new(TOperationState::RUNNING_STATE);
        let mut refused = reply(TOperationState::FINISHED_STATE, None);
        refused.status = status::error("HY000", "no such operation".to_owned());
        observed.note_status(&refused);
        assert_eq!(observed.get().state, TOperationState::RUNNING_STATE);
        observed.note_cancelled();
        assert_eq!(observed.get().state, TOperationState::CANCELED_STATE);
        assert!(observed.get().completed_ms > 0);
    }
}
