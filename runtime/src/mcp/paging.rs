//! Paging of list results: an opaque offset cursor, and the list handlers built on it.

use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::McpServer;
use super::registry::{Registry, read};
use crate::jsonrpc::RpcError;
use crate::server::RequestContext;
use crate::transport::BoxFuture;
use crate::types::v2026_07_28::{ClientCapabilities, PaginatedRequestParams};

/// Paging of list results (the caching fields are the low-level server's job): the
/// `McpServer`'s lists, and the lists of extensions served beside them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paging {
    pub(crate) page_size: usize,
}

impl Paging {
    /// One page of `items` from `cursor` (an offset this server issued), each as `f`
    /// shows it (or not at all: a page may then hold fewer), and the next cursor if
    /// there is more; a cursor this server did not issue is -32602.
    pub(crate) fn page<E, T>(
        &self,
        items: &[E],
        cursor: Option<&str>,
        f: impl Fn(&E) -> Option<T>,
    ) -> Result<(Vec<T>, Option<String>), RpcError> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix("o")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n <= items.len())
                .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?,
        };
        let end = (start + self.page_size).min(items.len());
        let page = items[start..end].iter().filter_map(f).collect();
        let next = (end < items.len()).then(|| format!("o{end}"));
        Ok((page, next))
    }
}

/// A list handler on `me`: one page of the registry's `pick`ed entries, each as `item`
/// shows it to a client with these capabilities (or not at all: a page may then hold
/// fewer), as `make` builds the result. A caller with a token sees only the entries
/// whose `scopes` it holds.
pub(super) fn lister<E, T, R>(
    me: &McpServer,
    pick: fn(&Registry) -> &Vec<Arc<E>>,
    scopes: fn(&E) -> &[String],
    item: fn(&E, &ClientCapabilities) -> Option<T>,
    make: fn(Vec<T>, Option<String>) -> R,
    paging: Paging,
) -> impl Fn(RequestContext, PaginatedRequestParams) -> BoxFuture<'static, Result<R, RpcError>>
+ Send
+ Sync
+ 'static
where
    E: Send + Sync + 'static,
    T: Send + 'static,
    R: serde::Serialize + DeserializeOwned + Send + 'static,
{
    let me = me.clone();
    move |ctx, params| {
        let registry = read(&me.inner.registry);
        let all = pick(&registry);
        let cursor = params.cursor.as_deref();
        let caps = ctx.client_capabilities();
        let shown = |e: &Arc<E>| item(e, caps);
        let page = match ctx.auth() {
            None => paging.page(all, cursor, shown),
            Some(auth) => {
                let held = |e: &Arc<E>| scopes(e).iter().all(|s| auth.scopes.contains(s));
                let visible: Vec<Arc<E>> = all.iter().filter(|e| held(e)).cloned().collect();
                paging.page(&visible, cursor, shown)
            }
        };
        drop(registry);
        Box::pin(async move {
            let (items, next) = page?;
            Ok(make(items, next))
        })
    }
}
