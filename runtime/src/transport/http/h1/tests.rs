//! The client's HTTP/1.1 against hand-written servers: framings, bounds, and when a
//! connection goes back to its pool.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};

use super::{Conn, Error, Recycle};

/// The connections given back.
#[derive(Default)]
struct Kept(Mutex<Vec<Conn>>);

impl Kept {
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

impl Recycle for Kept {
    fn recycle(self: Arc<Self>, conn: Conn) {
        self.0.lock().unwrap().push(conn);
    }
}

/// What one exchange came to.
struct Outcome {
    /// The status and the body read (or why not), or why the head was not read.
    answer: Result<(StatusCode, Result<Bytes, Error>), Error>,
    /// Whether the connection went back to the pool.
    kept: bool,
    /// What the server read of the request.
    request: Vec<u8>,
}

/// A server that writes `pieces` one at a time, flushed, then closes if `close`.
fn server(pieces: Vec<Vec<u8>>, close: bool) -> (DuplexStream, tokio::task::JoinHandle<Vec<u8>>) {
    let (client, mut server) = tokio::io::duplex(256 * 1024);
    let task = tokio::spawn(async move {
        let mut request = vec![0u8; 4096];
        let n = server.read(&mut request).await.unwrap_or(0);
        request.truncate(n);
        for piece in pieces {
            if server.write_all(&piece).await.is_err() {
                break;
            }
            let _ = server.flush().await;
            tokio::task::yield_now().await;
        }
        if !close {
            // Keep the connection open until the client is done with it.
            let mut rest = [0u8; 64];
            let _ = server.read(&mut rest).await;
        }
        request
    });
    (client, task)
}

async fn exchange_in(pieces: Vec<Vec<u8>>, close: bool) -> Outcome {
    let (io, task) = server(pieces, close);
    let kept = Arc::new(Kept::default());
    let recycle: Arc<dyn Recycle> = kept.clone();
    let mut request = Request::new(Bytes::from_static(b"{}"));
    *request.method_mut() = http::Method::POST;
    request
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    let answer = match Conn::new(io).send(&request.into(), "/mcp", recycle).await {
        Ok(response) => {
            let status = response.status;
            let body = response
                .body
                .collect()
                .await
                .map(|collected| collected.to_bytes());
            Ok((status, body))
        }
        Err(e) => Err(e),
    };
    let kept_now = kept.count() == 1;
    // Closing the kept connection lets a server waiting for more finish.
    kept.0.lock().unwrap().clear();
    let request = task.await.unwrap();
    Outcome {
        answer,
        kept: kept_now,
        request,
    }
}

/// The exchange with the whole answer written at once, the connection left open.
async fn exchange(answer: &[u8]) -> Outcome {
    exchange_in(vec![answer.to_vec()], false).await
}

/// The exchange with the answer written one byte at a time.
async fn exchange_bytewise(answer: &[u8], close: bool) -> Outcome {
    exchange_in(answer.iter().map(|b| vec![*b]).collect(), close).await
}

fn body(outcome: &Outcome) -> &[u8] {
    match &outcome.answer {
        Ok((_, Ok(body))) => body,
        Ok((_, Err(e))) => panic!("the body failed: {e}"),
        Err(e) => panic!("the head failed: {e}"),
    }
}

fn body_error(outcome: &Outcome) -> &Error {
    match &outcome.answer {
        Ok((_, Err(e))) => e,
        Ok((_, Ok(body))) => panic!("the body was read: {body:?}"),
        Err(e) => panic!("the head failed: {e}"),
    }
}

fn head_error(outcome: &Outcome) -> &Error {
    match &outcome.answer {
        Err(e) => e,
        Ok((status, _)) => panic!("the head was read: {status}"),
    }
}

#[tokio::test]
async fn the_request_goes_out_with_its_target_fields_and_length() {
    let outcome = exchange(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n").await;
    assert_eq!(
        String::from_utf8(outcome.request.clone()).unwrap(),
        "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
    );
    assert_eq!(body(&outcome), b"");
    assert!(outcome.kept);
}

#[tokio::test]
async fn a_body_framed_by_its_length_is_read_and_the_connection_kept() {
    let outcome = exchange(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").await;
    assert_eq!(outcome.answer.as_ref().unwrap().0, StatusCode::OK);
    assert_eq!(body(&outcome), b"hello");
    assert!(outcome.kept);
    let split = exchange_bytewise(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", false);
    let outcome = split.await;
    assert_eq!(body(&outcome), b"hello");
    assert!(outcome.kept);
}

#[tokio::test]
async fn a_chunked_body_is_read_whatever_its_splits_with_extensions_and_trailers() {
    let answer: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
        5\r\nhello\r\n6;name=value\r\n world\r\n0\r\nx-trailer: yes\r\n\r\n";
    for outcome in [
        exchange(answer).await,
        exchange_bytewise(answer, false).await,
    ] {
        assert_eq!(body(&outcome), b"hello world");
        assert!(outcome.kept);
    }
}

#[tokio::test]
async fn a_body_framed_by_the_close_ends_with_it_and_its_connection_is_not_kept() {
    let outcome = exchange_in(vec![b"HTTP/1.1 200 OK\r\n\r\nuntil the end".to_vec()], true).await;
    assert_eq!(body(&outcome), b"until the end");
    assert!(!outcome.kept);
}

#[tokio::test]
async fn informational_answers_are_passed_over_for_the_final_one() {
    let outcome = exchange(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n\
          HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
    )
    .await;
    assert_eq!(outcome.answer.as_ref().unwrap().0, StatusCode::OK);
    assert_eq!(body(&outcome), b"{}");
}

#[tokio::test]
async fn no_content_has_no_body_even_without_a_length() {
    let outcome = exchange(b"HTTP/1.1 204 No Content\r\n\r\n").await;
    assert_eq!(body(&outcome), b"");
    assert!(outcome.kept);
}

#[tokio::test]
async fn a_connection_the_server_closes_or_answers_in_1_0_is_not_kept() {
    let outcome =
        exchange(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}").await;
    assert_eq!(body(&outcome), b"{}");
    assert!(!outcome.kept);
    let outcome = exchange(b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\n{}").await;
    assert!(!outcome.kept);
    let outcome =
        exchange(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 2\r\n\r\n{}").await;
    assert!(outcome.kept);
}

#[tokio::test]
async fn an_answer_framed_two_ways_is_refused() {
    // h1_responses found hyper reading `chunked,` beside a length by the close, where
    // tern read the chunks: framed two ways, it is refused.
    for answer in [
        &b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked,\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    ] {
        let outcome = exchange(answer).await;
        assert!(matches!(head_error(&outcome), Error::Malformed(_)));
    }
}

#[tokio::test]
async fn bytes_after_the_answer_make_the_connection_unfit_to_keep() {
    let outcome = exchange(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200 OK").await;
    assert_eq!(body(&outcome), b"{}");
    assert!(!outcome.kept);
}

#[tokio::test]
async fn lengths_that_disagree_or_are_not_numbers_are_refused() {
    for answer in [
        &b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}"[..],
        b"HTTP/1.1 200 OK\r\ncontent-length: 2, 3\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\ncontent-length: +2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999999\r\n\r\n{}",
    ] {
        let outcome = exchange(answer).await;
        assert!(matches!(head_error(&outcome), Error::Malformed(_)));
    }
    // The same length twice is one length.
    let outcome = exchange(b"HTTP/1.1 200 OK\r\ncontent-length: 2, 2\r\n\r\n{}").await;
    assert_eq!(body(&outcome), b"{}");
}

#[test]
fn a_length_of_digits_alone_reads_as_any_length_does() {
    let read = |values: &[&str]| {
        let mut fields = http::HeaderMap::new();
        for value in values {
            fields.append(http::header::CONTENT_LENGTH, value.parse().unwrap());
        }
        super::content_length(&fields)
    };
    // Digits alone, up to the nineteen `plain_length` takes, and past them.
    for (value, length) in [
        ("0", 0),
        ("007", 7),
        ("365", 365),
        ("9999999999999999999", 9_999_999_999_999_999_999),
        ("18446744073709551615", u64::MAX),
        (" 12 ", 12),
        ("12, 12", 12),
    ] {
        assert_eq!(read(&[value]), Ok(Some(length)), "{value:?}");
        assert_eq!(
            super::plain_length(value.as_bytes()).is_some(),
            value.len() < 20 && value.bytes().all(|b| b.is_ascii_digit()),
            "{value:?}"
        );
    }
    assert_eq!(read(&["12", "12"]), Ok(Some(12)));
    assert_eq!(read(&[]), Ok(None));
    for values in [
        &["18446744073709551616"][..],
        &[""],
        &["+1"],
        &["-1"],
        &["1 2"],
        &["12", "13"],
        &["12", "1,2"],
    ] {
        assert!(read(values).is_err(), "{values:?}");
    }
}

#[tokio::test]
async fn a_trailer_that_is_not_a_field_line_is_refused() {
    // Found by the differential fuzz target against hyper (h1_responses's sibling,
    // h1_requests): a trailer name with a byte no token has.
    for trailer in [
        &b"x-tr\xe1iler: 1\r\n"[..],
        b"no colon\r\n",
        b": empty name\r\n",
        b"x-bare: lf\n",
        b" folded: on\r\n",
    ] {
        let mut answer =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n".to_vec();
        answer.extend_from_slice(trailer);
        answer.extend_from_slice(b"\r\n");
        let outcome = exchange(&answer).await;
        assert!(
            matches!(body_error(&outcome), Error::Malformed(_)),
            "{:?}",
            String::from_utf8_lossy(trailer)
        );
    }
}

#[tokio::test]
async fn a_chunk_size_line_without_a_size_is_refused_not_read_as_the_end() {
    // Found by h1_responses: httparse reads ";ext" as a size of 0.
    for line in [&b";ext=1"[..], b" 2", b"\t2", b"x"] {
        let mut answer =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n".to_vec();
        answer.extend_from_slice(line);
        answer.extend_from_slice(b"\r\n\r\n");
        let outcome = exchange(&answer).await;
        assert!(
            matches!(body_error(&outcome), Error::Malformed(_)),
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }
}

#[tokio::test]
async fn transfer_codings_tern_cannot_read_are_refused() {
    // Found by the differential fuzz target h1_responses: hyper refuses these too.
    for answer in [
        &b"HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nxyz",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\nxyz",
        // An empty element last: hyper reads the body by the close, not as chunks.
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked,,,\r\n\r\n0\r\n\r\n",
        // `chunked`, then a value of obs-text: hyper reads the last value, not chunked.
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntransfer-encoding: x\xff\r\n\r\n0\r\n\r\n",
    ] {
        let outcome = exchange(answer).await;
        assert!(matches!(head_error(&outcome), Error::Malformed(_)));
    }
}

#[tokio::test]
async fn a_body_cut_short_fails_and_its_connection_goes() {
    let outcome = exchange_in(
        vec![b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc".to_vec()],
        true,
    )
    .await;
    assert!(matches!(body_error(&outcome), Error::Closed));
    assert!(!outcome.kept);
    let outcome = exchange_in(
        vec![b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel".to_vec()],
        true,
    )
    .await;
    assert!(matches!(body_error(&outcome), Error::Closed));
    let outcome = exchange_in(vec![b"HTTP/1.1 200 OK\r\ncontent-".to_vec()], true).await;
    assert!(matches!(head_error(&outcome), Error::Closed));
}

#[tokio::test]
async fn a_head_past_its_bound_is_refused() {
    let mut endless = b"HTTP/1.1 200 OK\r\n".to_vec();
    while endless.len() <= super::MAX_HEAD + 1024 {
        endless.extend_from_slice(b"x-filler: 0123456789abcdef0123456789abcdef\r\n");
    }
    let outcome = exchange(&endless).await;
    assert!(matches!(head_error(&outcome), Error::TooLarge(_)));
    let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..=super::MAX_HEADERS {
        many.extend_from_slice(format!("x-{i}: 1\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let outcome = exchange(&many).await;
    assert!(matches!(head_error(&outcome), Error::TooLarge(_)));
}

#[tokio::test]
async fn endless_chunk_size_lines_and_trailers_are_refused() {
    let mut answer = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;".to_vec();
    answer.extend(std::iter::repeat_n(b'a', 8 * 1024));
    let outcome = exchange(&answer).await;
    assert!(matches!(body_error(&outcome), Error::TooLarge(_)));
    let mut answer = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n".to_vec();
    while answer.len() <= super::MAX_HEAD + 1024 {
        answer.extend_from_slice(b"x-trailer: 0123456789abcdef0123456789abcdef\r\n");
    }
    let outcome = exchange(&answer).await;
    assert!(matches!(body_error(&outcome), Error::TooLarge(_)));
}

#[tokio::test]
async fn trailers_are_bounded_under_hypers_bounds() {
    // h1_responses found tern reading 150 short trailer lines that hyper refuses (it
    // takes 100): 64 lines are read, the 65th is refused.
    let with_trailers = |lines: usize| {
        let mut answer =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n".to_vec();
        for i in 0..lines {
            answer.extend_from_slice(format!("x-{i}: 1\r\n").as_bytes());
        }
        answer.extend_from_slice(b"\r\n");
        answer
    };
    assert_eq!(body(&exchange(&with_trailers(64)).await), b"{}");
    let outcome = exchange(&with_trailers(65)).await;
    assert!(matches!(body_error(&outcome), Error::TooLarge(_)));
}

#[tokio::test]
async fn malformed_heads_and_chunks_are_refused() {
    for answer in [
        &b"HTTP/1.1 2000 OK\r\n\r\n"[..],
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 101 Switching\r\n\r\n",
    ] {
        let outcome = exchange(answer).await;
        assert!(matches!(head_error(&outcome), Error::Malformed(_)));
    }
    for answer in [
        &b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"[..],
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
    ] {
        let outcome = exchange(answer).await;
        assert!(matches!(body_error(&outcome), Error::Malformed(_)));
    }
}

#[tokio::test]
async fn an_idle_connection_knows_when_the_server_closed_it() {
    let (client, server) = tokio::io::duplex(1024);
    let mut conn = Conn::new(client);
    assert!(!conn.is_closed());
    drop(server);
    assert!(conn.is_closed());
}
