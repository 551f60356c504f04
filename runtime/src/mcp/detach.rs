//! A tool body's way to ask, mid-call, for its call to go on as a task: the context
//! holds one end, the call that may become a task the other.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::jsonrpc::RpcError;

/// A body's way to ask for its call to become a task: answered once the task is stored.
pub(crate) struct Detach {
    state: Mutex<DetachState>,
}

enum DetachState {
    /// Not yet: the handler waits on the other end.
    Inline(oneshot::Sender<oneshot::Sender<Result<(), RpcError>>>),
    /// A task already.
    Task,
    /// Asked and failed, or the handler is gone.
    Closed,
}

impl std::fmt::Debug for Detach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Detach").finish_non_exhaustive()
    }
}

impl Detach {
    pub(super) fn new() -> (
        Arc<Self>,
        oneshot::Receiver<oneshot::Sender<Result<(), RpcError>>>,
    ) {
        let (tx, rx) = oneshot::channel();
        let me = Arc::new(Self {
            state: Mutex::new(DetachState::Inline(tx)),
        });
        (me, rx)
    }

    pub(super) fn detached() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(DetachState::Task),
        })
    }

    pub(crate) async fn request(&self) -> Result<bool, RpcError> {
        let sender = {
            let mut state = crate::util::lock(&self.state);
            match std::mem::replace(&mut *state, DetachState::Closed) {
                DetachState::Inline(tx) => tx,
                DetachState::Task => {
                    *state = DetachState::Task;
                    return Ok(true);
                }
                DetachState::Closed => return Ok(false),
            }
        };
        let (ack, created) = oneshot::channel();
        if sender.send(ack).is_err() {
            return Ok(false);
        }
        match created.await {
            Ok(Ok(())) => {
                *crate::util::lock(&self.state) = DetachState::Task;
                Ok(true)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(false),
        }
    }
}
