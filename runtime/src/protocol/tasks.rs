//! The tasks extension's methods as client requests: each generated params type with
//! the request's `_meta` beside it (the extension's params do not name `_meta`), and a
//! marker per method that the server routes and the client calls.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::types::ext_tasks as ext;
use crate::types::rpc::{ClientRequestMethod, Request};
use crate::types::v2026_07_28::RequestMetaObject;
use crate::types::v2026_07_28::method::ClientRequestParams;

/// The extension's identifier, as declared under `capabilities.extensions`.
pub(crate) const EXTENSION: &str = ext::EXTENSION_ID;

/// A tasks method's params: the extension's params (which do not name `_meta`) and the
/// request's `_meta`, read out of them once.
#[derive(Debug, Clone)]
pub(crate) struct WithMeta<P> {
    pub(crate) params: P,
    meta: Option<Box<RequestMetaObject>>,
}

impl<P> WithMeta<P> {
    /// Params to send: the client adds `_meta` as it writes them.
    pub(crate) fn new(params: P) -> Self {
        Self { params, meta: None }
    }
}

/// What the server reads from a tasks method's generated params.
pub(crate) trait TaskParams:
    Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static
{
    fn task_id(&self) -> &str;
    fn extra(&mut self) -> &mut Map<String, Value>;
}

macro_rules! task_params {
    ($($ty:ty),*) => {$(
        impl TaskParams for $ty {
            fn task_id(&self) -> &str {
                &self.task_id
            }
            fn extra(&mut self) -> &mut Map<String, Value> {
                &mut self.extra
            }
        }
    )*};
}
task_params!(
    ext::GetTaskRequestParams,
    ext::UpdateTaskRequestParams,
    ext::CancelTaskRequestParams
);

impl<P: TaskParams> Serialize for WithMeta<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut params = self.params.clone();
        if let Some(meta) = &self.meta {
            let meta = serde_json::to_value(meta).map_err(serde::ser::Error::custom)?;
            params
                .extra()
                .insert(crate::protocol::META.to_owned(), meta);
        }
        params.serialize(serializer)
    }
}

impl<'de, P: TaskParams> Deserialize<'de> for WithMeta<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut params = P::deserialize(deserializer)?;
        let meta = match params.extra().remove(crate::protocol::META) {
            Some(meta) => Some(serde_json::from_value(meta).map_err(serde::de::Error::custom)?),
            None => None,
        };
        Ok(Self { params, meta })
    }
}

impl<P: TaskParams> ClientRequestParams for WithMeta<P> {
    fn request_meta(&self) -> Option<&RequestMetaObject> {
        self.meta.as_deref()
    }
    fn request_meta_slot(&mut self) -> Option<&mut Option<Box<RequestMetaObject>>> {
        Some(&mut self.meta)
    }
}

macro_rules! task_method {
    ($(#[$doc:meta])* $name:ident = $marker:ty, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) enum $name {}
        impl Request for $name {
            const METHOD: &'static str = <$marker as Request>::METHOD;
            const MAY_REQUIRE_INPUT: bool = <$marker as Request>::MAY_REQUIRE_INPUT;
            const CACHEABLE: bool = <$marker as Request>::CACHEABLE;
            const TARGET: Option<&'static str> = <$marker as Request>::TARGET;
            const CAPABILITY: Option<&'static str> = <$marker as Request>::CAPABILITY;
            type Params = WithMeta<$params>;
            type Result = <$marker as Request>::Result;
            fn target(params: &Self::Params) -> Option<&str> {
                Some(params.params.task_id())
            }
        }
        impl ClientRequestMethod for $name {}
    };
}
task_method!(
    /// `tasks/get`, routed.
    GetTask = ext::method::GetTask, ext::GetTaskRequestParams
);
task_method!(
    /// `tasks/update`, routed.
    UpdateTask = ext::method::UpdateTask, ext::UpdateTaskRequestParams
);
task_method!(
    /// `tasks/cancel`, routed.
    CancelTask = ext::method::CancelTask, ext::CancelTaskRequestParams
);
