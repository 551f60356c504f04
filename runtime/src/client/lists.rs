//! Typed lists: one page of tools, prompts, resources or resource templates, or every
//! page, following `nextCursor` up to a cap a server that loops cannot get past.

use super::Client;
use crate::Error;
use crate::types::rpc::ClientRequestMethod;
use crate::types::v2026_07_28::{
    PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool, method,
};

/// The most pages a `list_all` call follows.
pub(crate) const MAX_LIST_PAGES: usize = 1_000;

pub(crate) mod sealed {
    /// Implemented by tern's list markers only.
    pub trait Sealed {}
}

/// A list method [`Client::list`] and [`Client::list_all`] page through: `tools/list`,
/// `prompts/list`, `resources/list`, `resources/templates/list`, and the skills
/// extension's `skills/list` (the generated method markers, the last in
/// [`skills`](crate::skills)). Implemented by tern only.
pub trait ListMethod:
    ClientRequestMethod<Params = PaginatedRequestParams> + sealed::Sealed
{
    /// What a page lists.
    type Item;
    /// A page's items and the cursor of the next.
    fn split(result: Self::Result) -> (Vec<Self::Item>, Option<String>);
    /// What the client keeps of a page it received (the tools' output schemas).
    fn seen(client: &Client, result: &Self::Result) {
        let _ = (client, result);
    }
}

macro_rules! paged {
    ($marker:ty, $item:ty, $field:ident $(, seen = $seen:expr)?) => {
        impl sealed::Sealed for $marker {}
        impl ListMethod for $marker {
            type Item = $item;
            fn split(result: Self::Result) -> (Vec<$item>, Option<String>) {
                (result.$field, result.next_cursor)
            }
            $(fn seen(client: &Client, result: &Self::Result) {
                $seen(client, &result.$field)
            })?
        }
    };
}
paged!(
    method::ListTools,
    Tool,
    tools,
    seen = super::outputs::learn_output_schemas
);
paged!(method::ListPrompts, Prompt, prompts);
paged!(method::ListResources, Resource, resources);
paged!(
    method::ListResourceTemplates,
    ResourceTemplate,
    resource_templates
);

fn page_params(cursor: Option<String>) -> PaginatedRequestParams {
    let mut params = PaginatedRequestParams::new();
    params.cursor = cursor;
    params
}

/// One page of `M`, what the client keeps of it kept.
pub(super) async fn page<M: ListMethod>(
    client: &Client,
    cursor: Option<String>,
) -> crate::Result<M::Result> {
    let result = client.request::<M>(page_params(cursor)).await?;
    M::seen(client, &result);
    Ok(result)
}

/// Every page of `M`, at most [`MAX_LIST_PAGES`].
pub(super) async fn all_pages<M: ListMethod>(client: &Client) -> crate::Result<Vec<M::Item>> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let (page, next) = M::split(page::<M>(client, cursor.take()).await?);
        items.extend(page);
        match next {
            None => return Ok(items),
            Some(next) => cursor = Some(next),
        }
    }
    Err(Error::Protocol(crate::ProtocolError::TooManyPages {
        method: M::METHOD,
        pages: MAX_LIST_PAGES,
    }))
}
