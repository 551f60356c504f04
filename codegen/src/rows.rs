//! The rows of the method table: each method, and the directions it travels in.

use proc_macro2::TokenStream;
use quote::quote;

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// A request from client to server.
    ClientRequest,
    /// A request from server to client (2025-11-25 sessions).
    ServerRequest,
    /// A request the server embeds in `InputRequiredResult.inputRequests`.
    InputRequest,
    /// A notification from client to server.
    ClientNotification,
    /// A notification from server to client.
    ServerNotification,
}

impl Direction {
    pub(crate) const ALL: [Direction; 5] = [
        Direction::ClientRequest,
        Direction::ServerRequest,
        Direction::InputRequest,
        Direction::ClientNotification,
        Direction::ServerNotification,
    ];

    pub(crate) fn union(self) -> &'static str {
        match self {
            Self::ClientRequest => "ClientRequest",
            Self::ServerRequest => "ServerRequest",
            Self::InputRequest => "InputRequest",
            Self::ClientNotification => "ClientNotification",
            Self::ServerNotification => "ServerNotification",
        }
    }

    pub(crate) fn is_request(self) -> bool {
        !matches!(self, Self::ClientNotification | Self::ServerNotification)
    }

    /// The field of `MethodInfo` that says a method travels this way.
    pub(crate) fn info_field(self) -> &'static str {
        match self {
            Self::ClientRequest => "client_request",
            Self::ServerRequest => "server_request",
            Self::InputRequest => "input_request",
            Self::ClientNotification => "client_notification",
            Self::ServerNotification => "server_notification",
        }
    }

    /// The capabilities definition of whoever receives a request sent this way.
    pub(crate) fn receiver_capabilities(self) -> Option<&'static str> {
        match self {
            Self::ClientRequest => Some("ServerCapabilities"),
            Self::ServerRequest | Self::InputRequest => Some("ClientCapabilities"),
            Self::ClientNotification | Self::ServerNotification => None,
        }
    }

    pub(crate) fn marker_trait(self) -> TokenStream {
        match self {
            Self::ClientRequest => quote!(crate::rpc::ClientRequestMethod),
            Self::ServerRequest => quote!(crate::rpc::ServerRequestMethod),
            Self::InputRequest => quote!(crate::rpc::InputMethod),
            Self::ClientNotification => quote!(crate::rpc::ClientNotificationMethod),
            Self::ServerNotification => quote!(crate::rpc::ServerNotificationMethod),
        }
    }
}

/// One row of the method table.
#[derive(Debug, Clone)]
pub struct Method {
    /// The JSON-RPC method string.
    pub method: String,
    /// The marker type's name.
    pub marker: String,
    /// The directions it travels in.
    pub directions: Vec<Direction>,
    /// The Rust type of `params`.
    pub params: String,
    /// The Rust type of the result (requests only).
    pub result: Option<String>,
    /// For methods that may answer input-required: the complete result type.
    pub complete: Option<String>,
    /// Whether the result type requires `ttlMs` and `cacheScope`.
    pub cacheable: bool,
    /// Whether the (complete) result type requires `resultType`, so its value always
    /// writes one.
    pub writes_result_type: bool,
    /// The params member that names what a client request acts on (`name`, `uri`).
    pub target: Option<String>,
    /// The member of the receiver's capabilities that says it handles the method.
    pub capability: Option<String>,
    /// The members of the params object (its schema's properties), when `params` is an
    /// object the request must carry: the accessors of the retry view read them.
    pub params_members: Vec<String>,
    /// The params struct and the definition its `_meta` member refers to, when the
    /// params are a named struct with such a member.
    pub params_meta: Option<(String, String)>,
    /// The definition's description.
    pub description: Option<String>,
    /// Whether an extension lets a server answer it with a task
    /// ([`Extension::task_results`](crate::Extension::task_results)).
    pub may_become_task: bool,
    /// What it makes its receiver do beyond reading its types.
    pub behaviour: crate::behaviour::Behaviour,
}

impl Method {
    /// Whether the result is an `Outcome`: complete, or input-required.
    pub fn may_require_input(&self) -> bool {
        self.complete.is_some()
    }

    /// Whether the method is a request (it has a result).
    pub fn is_request(&self) -> bool {
        self.result.is_some()
    }
}
