//! `subscriptions/listen` on an [`McpServer`](super::McpServer) or a gateway: the acknowledgement, then the list
//! changes, resource updates and what its extensions add (the tasks extension's
//! `notifications/tasks`) the client asked for, until it cancels or falls a whole
//! backlog of events behind.

use std::collections::HashSet;

use serde_json::json;
use tokio::sync::broadcast;

use super::Extensions;
use super::ListenFeed;
use crate::jsonrpc::RpcError;
use crate::server::events::Events;
use crate::server::events::Stamped;
use crate::server::{RequestContext, ServerEvent};
use crate::transport::BoxFuture;
use crate::types::rpc::Notification as _;
use crate::types::v2026_07_28::{
    SubscriptionFilter, SubscriptionsListenRequestParams, SubscriptionsListenResult, method,
};

/// How many resource URIs one listen stream may subscribe to.
pub(crate) const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1_000;

/// Serves `subscriptions/listen` on a server whose events are `events` (an
/// `McpServer`'s, a gateway's): the acknowledgement, then the events the stream asked
/// for until it is cancelled.
pub(crate) fn listen(
    events: &Events,
    extensions: Extensions,
    ctx: RequestContext,
    params: SubscriptionsListenRequestParams,
) -> BoxFuture<'static, Result<SubscriptionsListenResult, RpcError>> {
    let mut rx = events.subscribe();
    Box::pin(async move {
        let id = match ctx.id() {
            crate::types::v2026_07_28::RequestId::String(s) => s.clone(),
            crate::types::v2026_07_28::RequestId::Integer(i) => i.to_string(),
        };
        let meta = json!({ "io.modelcontextprotocol/subscriptionId": id });
        // The URIs are taken out of the params, not copied: a stream keeps what it
        // asked for once, for as long as it lives.
        let mut filter = params.notifications;
        let uris: Vec<String> = filter.resource_subscriptions.take().unwrap_or_default();
        if uris.len() > MAX_RESOURCE_SUBSCRIPTIONS {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: at most {MAX_RESOURCE_SUBSCRIPTIONS} resourceSubscriptions per stream"
            )));
        }
        let mut feeds = Vec::new();
        for extension in extensions.iter() {
            feeds.extend(extension.listen(&ctx, &filter).await?);
        }
        acknowledge(&ctx, &filter, &uris, &feeds, &meta);
        let watched = watched(uris);
        stream(&ctx, &mut rx, &filter, &watched, &mut feeds, &meta).await;
        serde_json::from_value(json!({ "resultType": "complete", "_meta": meta }))
            .map_err(|e| RpcError::internal(format!("Internal error: {e}")))
    })
}

/// Tells the stream what it will hear: the lists, the resources and each extension's
/// feed (`notifications/subscriptions/acknowledged`).
fn acknowledge(
    ctx: &RequestContext,
    filter: &SubscriptionFilter,
    uris: &[String],
    feeds: &[Box<dyn ListenFeed>],
    meta: &serde_json::Value,
) {
    let mut accepted = json!({
        "toolsListChanged": filter.tools_list_changed == Some(true),
        "promptsListChanged": filter.prompts_list_changed == Some(true),
        "resourcesListChanged": filter.resources_list_changed == Some(true),
    });
    if !uris.is_empty() {
        accepted["resourceSubscriptions"] = json!(&uris);
    }
    if let serde_json::Value::Object(accepted) = &mut accepted {
        for feed in feeds {
            accepted.extend(feed.accepted());
        }
    }
    ctx.notify_value(
        method::SubscriptionsAcknowledged::METHOD,
        json!({ "_meta": meta, "notifications": accepted }),
    );
}

/// The stream's notifications until it is cancelled, falls a backlog behind, or the
/// server's events end.
async fn stream(
    ctx: &RequestContext,
    rx: &mut broadcast::Receiver<Stamped>,
    filter: &SubscriptionFilter,
    watched: &HashSet<Box<str>>,
    feeds: &mut [Box<dyn ListenFeed>],
    meta: &serde_json::Value,
) {
    loop {
        tokio::select! {
            () = ctx.cancellation().cancelled() => break,
            event = rx.recv() => match event {
                Ok(event) => {
                    if let Some((name, params)) = notification(&event.event, filter, watched, meta) {
                        ctx.notify_value(name, params);
                        // One notification at a time: the stream is read when its
                        // reader is ready, so what waits for a slow reader is its
                        // place in the server's backlog, not copies made for it.
                        tokio::task::yield_now().await;
                    }
                }
                // A stream whose reader fell a whole backlog behind is ended, not
                // fed on with a gap it cannot see: its client listens again and reads
                // afresh. Nothing waits for a slow stream (the broadcast never
                // blocks), so one slow reader delays no other.
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "a listen stream fell behind and missed events: ending it");
                    break;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            changed = next_from(feeds, meta) => {
                for (name, params) in changed {
                    ctx.notify_value(name, params);
                }
                tokio::task::yield_now().await;
            }
        }
    }
}

/// The resources a stream watches, as it keeps them while it lives: each URI once, in
/// exactly its own length (not the parsed request, not a `String`'s spare room).
fn watched(uris: Vec<String>) -> HashSet<Box<str>> {
    uris.into_iter().map(String::into_boxed_str).collect()
}

/// The next notifications of whichever feed has some first; never, without feeds.
async fn next_from(
    feeds: &mut [Box<dyn ListenFeed>],
    meta: &serde_json::Value,
) -> Vec<(&'static str, serde_json::Value)> {
    if feeds.is_empty() {
        return std::future::pending().await;
    }
    let nexts = feeds.iter_mut().map(|feed| feed.next(meta));
    futures_util::future::select_all(nexts).await.0
}

/// The notification `event` makes on a stream that asked for `filter` and the
/// resources `watched`, if it asked for it.
fn notification(
    event: &ServerEvent,
    filter: &crate::types::v2026_07_28::SubscriptionFilter,
    watched: &HashSet<Box<str>>,
    meta: &serde_json::Value,
) -> Option<(&'static str, serde_json::Value)> {
    let on = |flag: Option<bool>| flag == Some(true);
    let name = match event {
        ServerEvent::ToolsChanged if on(filter.tools_list_changed) => {
            method::ToolListChanged::METHOD
        }
        ServerEvent::PromptsChanged if on(filter.prompts_list_changed) => {
            method::PromptListChanged::METHOD
        }
        ServerEvent::ResourcesChanged if on(filter.resources_list_changed) => {
            method::ResourceListChanged::METHOD
        }
        ServerEvent::ResourceUpdated(uri) if watched.contains(&**uri) => {
            return Some((
                method::ResourceUpdated::METHOD,
                json!({ "_meta": meta, "uri": &**uri }),
            ));
        }
        _ => return None,
    };
    Some((name, json!({ "_meta": meta })))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heap bytes `set` holds: its table (a key and a control byte a bucket) and
    /// each URI.
    fn kept_bytes(set: &HashSet<Box<str>>) -> usize {
        let table = set.capacity() * (std::mem::size_of::<Box<str>>() + 1);
        table + set.iter().map(|uri| uri.len()).sum::<usize>()
    }

    #[test]
    fn a_stream_keeps_about_the_bytes_of_the_uris_it_asked_for() {
        let uris: Vec<String> = (0..MAX_RESOURCE_SUBSCRIPTIONS)
            .map(|i| format!("note://{i}/{}", "x".repeat(3_400)))
            .collect();
        let text = serde_json::to_string(&json!({
            "notifications": {"resourceSubscriptions": uris}
        }))
        .expect("JSON");
        let params: SubscriptionsListenRequestParams =
            serde_json::from_str(&text).expect("the params read");
        let asked = params
            .notifications
            .resource_subscriptions
            .expect("the URIs");
        let kept = kept_bytes(&watched(asked));
        // The request's text is the URIs, quoted and separated: what is kept is within a
        // few percent of it (the table's buckets, a bucket a URI and spare ones).
        assert!(
            kept * 100 <= text.len() * 103,
            "{kept} bytes kept for a request of {}",
            text.len()
        );
    }
}
