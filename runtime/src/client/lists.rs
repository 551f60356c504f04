//! Typed lists: one page of tools, prompts, resources or resource templates, or every
//! page, following `nextCursor` up to a cap a server that loops cannot get past.

use super::Client;
use crate::Error;
use crate::types::rpc::ClientRequestMethod;
use crate::types::v2026_07_28::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool, method,
};

/// The most pages a `list_all_*` call follows: a server that keeps answering with a
/// next cursor is stopped there with [`Error::TooManyPages`].
pub const MAX_LIST_PAGES: usize = 1_000;

/// A list method's page: its items and the cursor of the next.
trait Paged: ClientRequestMethod<Params = PaginatedRequestParams> {
    type Item;
    fn split(result: Self::Result) -> (Vec<Self::Item>, Option<String>);
    /// What the client keeps of a page it received (the tools' output schemas).
    fn seen(client: &Client, result: &Self::Result) {
        let _ = (client, result);
    }
}

macro_rules! paged {
    ($marker:ty, $item:ty, $field:ident $(, seen = $seen:expr)?) => {
        impl Paged for $marker {
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
    seen = Client::learn_output_schemas
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

impl Client {
    /// One page of `M`, what the client keeps of it kept.
    async fn page<M: Paged>(&self, cursor: Option<String>) -> crate::Result<M::Result> {
        let result = self.request::<M>(page_params(cursor)).await?;
        M::seen(self, &result);
        Ok(result)
    }

    async fn all_pages<M: Paged>(&self) -> crate::Result<Vec<M::Item>> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let (page, next) = M::split(self.page::<M>(cursor.take()).await?);
            items.extend(page);
            match next {
                None => return Ok(items),
                Some(next) => cursor = Some(next),
            }
        }
        Err(Error::TooManyPages {
            method: M::METHOD,
            pages: MAX_LIST_PAGES,
        })
    }

    /// One page of `tools/list`: the first without a cursor, the next with the one the
    /// previous page gave.
    pub async fn list_tools(&self, cursor: Option<String>) -> crate::Result<ListToolsResult> {
        self.page::<method::ListTools>(cursor).await
    }

    /// Every tool, page after page (at most [`MAX_LIST_PAGES`]).
    pub async fn list_all_tools(&self) -> crate::Result<Vec<Tool>> {
        self.all_pages::<method::ListTools>().await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<String>) -> crate::Result<ListPromptsResult> {
        self.page::<method::ListPrompts>(cursor).await
    }

    /// Every prompt, page after page (at most [`MAX_LIST_PAGES`]).
    pub async fn list_all_prompts(&self) -> crate::Result<Vec<Prompt>> {
        self.all_pages::<method::ListPrompts>().await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> crate::Result<ListResourcesResult> {
        self.page::<method::ListResources>(cursor).await
    }

    /// Every resource, page after page (at most [`MAX_LIST_PAGES`]).
    pub async fn list_all_resources(&self) -> crate::Result<Vec<Resource>> {
        self.all_pages::<method::ListResources>().await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> crate::Result<ListResourceTemplatesResult> {
        self.page::<method::ListResourceTemplates>(cursor).await
    }

    /// Every resource template, page after page (at most [`MAX_LIST_PAGES`]).
    pub async fn list_all_resource_templates(&self) -> crate::Result<Vec<ResourceTemplate>> {
        self.all_pages::<method::ListResourceTemplates>().await
    }
}
