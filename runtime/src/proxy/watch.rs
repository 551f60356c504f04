//! The upstreams' list changes, heard and passed on: each upstream is listened to (a
//! `subscriptions/listen` stream, or its 2025-11-25 session's own stream), a change
//! forgets the gateway's copy of that list and is told to the gateway's own listeners.
//! An upstream that cannot be heard has its lists fetched on every request instead.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::catalog::Link;
use crate::client::Notice;
use crate::server::ServerEvent;
use crate::server::events::Events;
use crate::types::v2026_07_28::{SubscriptionFilter, method};

/// How long after a listen stream failed or ended the upstream is listened to again.
const AGAIN_AFTER: Duration = Duration::from_secs(5);

/// Listens to every upstream in `links` until `stop` is cancelled.
pub(super) fn start(links: &[Arc<Link>], events: &Events, stop: &CancellationToken) {
    for link in links {
        let (link, events, stop) = (Arc::clone(link), events.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = follow(&link, &events) => {}
            }
            link.heard.store(false, Ordering::Release);
        });
    }
}

/// Listens to `link` for good: each stream heard to its end, then opened again.
async fn follow(link: &Link, events: &Events) {
    loop {
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = Some(true);
        filter.prompts_list_changed = Some(true);
        filter.resources_list_changed = Some(true);
        match link.client.listen(filter).await {
            Ok(mut stream) => {
                link.heard.store(true, Ordering::Release);
                while let Some(notice) = stream.next().await {
                    heard(link, events, notice);
                }
                tracing::info!(upstream = %link.label(), "an upstream's listen stream ended");
            }
            Err(e) => {
                tracing::info!(upstream = %link.label(), error = %e, "an upstream cannot be listened to: its lists are fetched on each request");
            }
        }
        link.heard.store(false, Ordering::Release);
        link.forget_all();
        tokio::time::sleep(AGAIN_AFTER).await;
    }
}

/// What one notice from `link` changes, told to the gateway's listeners.
fn heard(link: &Link, events: &Events, notice: Notice) {
    match notice {
        Notice::ToolsChanged => {
            link.forget::<method::ListTools>();
            events.publish(ServerEvent::ToolsChanged);
        }
        Notice::PromptsChanged => {
            link.forget::<method::ListPrompts>();
            events.publish(ServerEvent::PromptsChanged);
        }
        Notice::ResourcesChanged => {
            link.forget::<method::ListResources>();
            link.forget::<method::ListResourceTemplates>();
            events.publish(ServerEvent::ResourcesChanged);
        }
        Notice::ResourceUpdated(uri) => events.publish(ServerEvent::ResourceUpdated(uri.into())),
        // The stream dropped and was opened again: changes may have gone unheard.
        Notice::Relistened => {
            link.forget_all();
            for event in [
                ServerEvent::ToolsChanged,
                ServerEvent::PromptsChanged,
                ServerEvent::ResourcesChanged,
            ] {
                events.publish(event);
            }
        }
        _ => {}
    }
}
