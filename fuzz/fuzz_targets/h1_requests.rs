//! The bytes a client sends on one connection, read by tern's HTTP/1.1 server and by
//! hyper's: where both read a request whole, they read the same method and the same
//! body (a framing disagreement is how requests are smuggled), and neither reads a
//! request the other refused, except where tern is the stricter (it refuses what hyper
//! would take: a smuggling shape, an over-long line), which the oracle allows.
#![no_main]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::{Request, Response};
use tern::fuzzing::h1::{BODY_CAP, ReadRequest, Replay, runtime, server_reads};

/// The requests hyper's server reads off the same connection, and whether it ended in
/// an error rather than at a clean end.
async fn hyper_reads(bytes: &[u8]) -> (Vec<ReadRequest>, bool) {
    // The requests read whole, and whether a body failed to read.
    let read = Arc::new(Mutex::new((Vec::new(), false)));
    let seen = Arc::clone(&read);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let seen = Arc::clone(&seen);
        async move {
            let method = request.method().to_string();
            let body = http_body_util::Limited::new(request.into_body(), BODY_CAP)
                .collect()
                .await;
            let mut seen = seen.lock().unwrap();
            match body {
                Ok(body) if !seen.1 => seen.0.push(ReadRequest {
                    method,
                    body: body.to_bytes().to_vec(),
                }),
                _ => seen.1 = true,
            }
            Ok::<_, Infallible>(Response::new(http_body_util::Empty::<bytes::Bytes>::new()))
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .serve_connection(hyper_util::rt::TokioIo::new(Replay::new(bytes)), service)
        .await;
    let (read, body_failed) = read.lock().unwrap().clone();
    (read, served.is_err() || body_failed)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some(runtime) = runtime() else {
        return;
    };
    runtime.block_on(async {
        let (tern, tern_refused) = server_reads(data).await;
        let (hyper, hyper_failed) = hyper_reads(data).await;
        let both = tern.len().min(hyper.len());
        assert_eq!(
            tern[..both],
            hyper[..both],
            "tern and hyper read different requests off the same bytes"
        );
        if tern.len() > hyper.len() {
            assert!(
                hyper_failed,
                "tern read a request hyper did not see, and hyper ended cleanly: \
                 tern {tern:?}, hyper {hyper:?}"
            );
        }
        if hyper.len() > tern.len() {
            assert!(
                tern_refused,
                "hyper read a request tern did not see, and tern ended cleanly: \
                 tern {tern:?}, hyper {hyper:?}"
            );
        }
    });
});
