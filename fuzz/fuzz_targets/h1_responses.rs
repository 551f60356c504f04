//! The bytes a server answers a `POST /mcp` with, read by tern's HTTP/1.1 client and by
//! hyper's: when both read a response whole, they read the same status and the same
//! body; tern reads none that hyper refuses (it may refuse what hyper takes: it is the
//! stricter of the two about framing).
#![no_main]

use http_body_util::BodyExt as _;
use tern::fuzzing::h1::{BODY_CAP, ReadResponse, Replay, client_reads, runtime};

/// The response hyper's client reads off the same connection.
async fn hyper_reads(bytes: &[u8]) -> Option<ReadResponse> {
    let io = hyper_util::rt::TokioIo::new(Replay::answering(bytes));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.ok()?;
    let driving = tokio::spawn(conn);
    let request = hyper::Request::post("/mcp")
        .header("host", "fuzz")
        .body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
        .ok()?;
    let response = sender.send_request(request).await.ok()?;
    let status = response.status().as_u16();
    let body = http_body_util::Limited::new(response.into_body(), BODY_CAP)
        .collect()
        .await
        .ok()?
        .to_bytes();
    driving.abort();
    Some(ReadResponse {
        status,
        body: body.to_vec(),
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some(runtime) = runtime() else {
        return;
    };
    runtime.block_on(async {
        let tern = client_reads(data).await;
        let hyper = hyper_reads(data).await;
        if let Some(tern) = tern {
            let hyper = hyper.expect("tern read a response hyper refused");
            assert_eq!(tern, hyper, "tern and hyper read different responses");
        }
    });
});
