//! A connected pair of in-memory transports, for tests and single-process setups.

use tokio::sync::mpsc;

use super::{BoxFuture, MessageSink, MessageSource, MessageTransport, TransportError};

/// One end of an in-memory connection.
#[derive(Debug)]
pub struct MemoryTransport {
    tx: mpsc::UnboundedSender<String>,
    rx: mpsc::UnboundedReceiver<String>,
}

/// Two connected ends: what one sends, the other receives.
pub fn pair() -> (MemoryTransport, MemoryTransport) {
    let (a_tx, b_rx) = mpsc::unbounded_channel();
    let (b_tx, a_rx) = mpsc::unbounded_channel();
    (
        MemoryTransport { tx: a_tx, rx: a_rx },
        MemoryTransport { tx: b_tx, rx: b_rx },
    )
}

struct Sink(mpsc::UnboundedSender<String>);
struct Source(mpsc::UnboundedReceiver<String>);

impl MessageSink for Sink {
    fn send(&self, message: String) -> BoxFuture<'_, Result<(), TransportError>> {
        let result = self
            .0
            .send(message)
            .map_err(|_| TransportError("the other end is closed".into()));
        Box::pin(async move { result })
    }
}

impl MessageSource for Source {
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>> {
        Box::pin(async move { self.0.recv().await.map(Ok) })
    }
}

impl MessageTransport for MemoryTransport {
    fn split(self) -> (Box<dyn MessageSink>, Box<dyn MessageSource>) {
        (Box::new(Sink(self.tx)), Box::new(Source(self.rx)))
    }
}
