//! The tasks extension through the gateway: a call an upstream made a task is answered
//! as that task; `tasks/get`, `tasks/update` and `tasks/cancel` go to the upstream the
//! task's id names. A named upstream's task ids are served as `NAME.id` and its tasks'
//! questions keyed `NAME.key`, as its tools and their questions are; an unnamed
//! upstream's as they are.

use std::sync::Arc;

use super::catalog::Catalog;
use super::names;
use super::relay;
use crate::jsonrpc::RpcError;
use crate::protocol::tasks::{CancelTask, GetTask, TaskParams, UpdateTask, WithMeta};
use crate::server::{RequestContext, ServerBuilder};
use crate::types::rpc::ClientRequestMethod;

/// The extension's identifier, as declared under `capabilities.extensions`.
pub(super) const EXTENSION: &str = crate::protocol::tasks::EXTENSION;

/// The routes of the extension's three methods.
pub(super) fn routes(builder: ServerBuilder, catalog: &Arc<Catalog>) -> ServerBuilder {
    let (get, update, cancel) = (
        Arc::clone(catalog),
        Arc::clone(catalog),
        Arc::clone(catalog),
    );
    builder
        .handle::<GetTask, _, _>(move |ctx, params| {
            let catalog = Arc::clone(&get);
            Box::pin(async move { forward::<GetTask, _>(&catalog, &ctx, params).await })
        })
        .handle::<UpdateTask, _, _>(move |ctx, params| {
            let catalog = Arc::clone(&update);
            Box::pin(async move { forward::<UpdateTask, _>(&catalog, &ctx, params).await })
        })
        .handle::<CancelTask, _, _>(move |ctx, params| {
            let catalog = Arc::clone(&cancel);
            Box::pin(async move { forward::<CancelTask, _>(&catalog, &ctx, params).await })
        })
}

/// One tasks method relayed to the upstream its task id names: the id (and an
/// update's answers) as the upstream knows them, the result's as the gateway serves it.
async fn forward<M, P>(
    catalog: &Catalog,
    ctx: &RequestContext,
    mut params: WithMeta<P>,
) -> Result<M::Result, RpcError>
where
    M: ClientRequestMethod<Params = WithMeta<P>>,
    P: TaskParams,
{
    // A named upstream's by its prefix, else the first upstream without a name.
    let id = params.params.task_id();
    let link = catalog
        .by_name(id)
        .map(|(link, _)| link)
        .or_else(|| catalog.unnamed())
        .cloned()
        .ok_or_else(|| RpcError::invalid_params("Unknown task"))?;
    let Some(name) = link.name.clone() else {
        return relay::send::<M>(&link, ctx, params).await;
    };
    let mut own = serde_json::to_value(&params.params).map_err(to_internal)?;
    names::task_inward(&name, &mut own);
    params.params = serde_json::from_value(own).map_err(to_internal)?;
    let result = relay::send::<M>(&link, ctx, params).await?;
    let mut value = serde_json::to_value(&result).map_err(to_internal)?;
    names::task_outward(&name, &mut value);
    serde_json::from_value(value).map_err(to_internal)
}

fn to_internal(e: serde_json::Error) -> RpcError {
    tracing::error!(error = %e, "a task could not be renamed");
    RpcError::internal("Internal error")
}
