//! The lists the gateway merges from its upstreams ([`Merged`]), each item kept as its
//! text ([`Kept`]), and one merged list as the gateway serves it ([`MergedList`]): its
//! upstreams' lists as kept (never copied whole), which of their items it serves, and a
//! page of those read on demand.
//!
//! Served names are unique, and each routes to the upstream that lists it. Refused,
//! with a warning naming the upstreams: a tool whose served name breaks the spec's
//! rules (1 to 128 of `A-Z a-z 0-9 _ - .`); an unnamed upstream's name that begins
//! with a named upstream's `NAME.` (a call would go to that upstream); a name already
//! served (by the gateway itself, an earlier unnamed upstream, or the same upstream).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::names::{self, SEPARATOR};
use crate::client::ListMethod;
use crate::jsonrpc::RpcError;
use crate::mcp::paging::Paging;
use crate::types::v2026_07_28::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt,
    Resource, ResourceTemplate, Tool, method,
};

/// One item of an upstream's list as the gateway keeps it: its name (a resource's URI,
/// a template's URI template) and its JSON text, read into its type only when a page
/// or a call needs it. What is kept of a list is about the bytes the upstream wrote,
/// never the many times more a tree of its schemas would take.
pub(super) struct Kept {
    /// What the item is found by: its name, URI or URI template.
    pub(super) name: Box<str>,
    raw: Box<RawValue>,
}

impl Kept {
    /// `item` of the list `M`, kept.
    pub(super) fn new<M: Merged>(item: &M::Item) -> serde_json::Result<Self> {
        Ok(Self {
            name: M::key(item).into(),
            raw: serde_json::value::to_raw_value(item)?,
        })
    }

    /// The item read into its type.
    pub(super) fn item<M: Merged>(&self) -> Option<M::Item> {
        serde_json::from_str(self.raw.get()).ok()
    }
}

/// A list the gateway merges from its upstreams: where a link keeps it, how a named
/// upstream's item is renamed, and the result a page of it makes.
pub(super) trait Merged:
    ListMethod<Item: Clone + Serialize + DeserializeOwned + Send + Sync + 'static>
{
    /// The member of a page that holds its items.
    const MEMBER: &'static str;
    /// Where a link keeps this list, of its four.
    const SLOT: usize;
    /// Whether its items are served under their upstream's name (tools and prompts).
    const NAMED: bool;
    /// Whether the spec's rules for tool names apply to its names.
    const RULED: bool = false;
    /// What an item is found by: its name, URI or URI template.
    fn key(item: &Self::Item) -> &str;
    /// The item's name, if the gateway serves it under its upstream's (tools and
    /// prompts; resources keep their URIs).
    fn name(item: &mut Self::Item) -> Option<&mut String>;
    /// A page of the merged list.
    fn page(items: Vec<Self::Item>, next: Option<String>) -> Self::Result;
    /// A tool the gateway serves itself, as an item of this list (of `tools/list`).
    fn own(tool: &Tool) -> Option<Self::Item> {
        let _ = tool;
        None
    }
    /// The item as the gateway serves it for the upstream called `prefix`.
    fn serve(prefix: Option<&str>, mut item: Self::Item) -> Self::Item {
        if let Some(name) = Self::name(&mut item) {
            *name = names::served(prefix, name);
        }
        item
    }
}

macro_rules! merged {
    ($marker:ty, $item:ty, $slot:literal, $result:ty, $member:literal, key: $key:ident,
        name: $($field:ident)? $(, own: $own:expr)?) => {
        impl Merged for $marker {
            const MEMBER: &'static str = $member;
            const SLOT: usize = $slot;
            const NAMED: bool = merged!(@named $($field)?);
            $(const RULED: bool = true; fn own(tool: &Tool) -> Option<$item> {
                ($own)(tool)
            })?
            fn key(item: &$item) -> &str {
                &item.$key
            }
            fn name(item: &mut $item) -> Option<&mut String> {
                let _ = &item;
                merged!(@name item $($field)?)
            }
            fn page(items: Vec<$item>, next: Option<String>) -> $result {
                let mut result = <$result>::new(items);
                result.next_cursor = next;
                result
            }
        }
    };
    (@name $item:ident $field:ident) => { Some(&mut $item.$field) };
    (@name $item:ident) => { None };
    (@named $field:ident) => { true };
    (@named) => { false };
}
// Tools: the spec's rules for their names apply, and the gateway serves its own.
merged!(method::ListTools, Tool, 0, ListToolsResult, "tools", key: name, name: name,
    own: |tool: &Tool| Some(tool.clone()));
merged!(method::ListPrompts, Prompt, 1, ListPromptsResult, "prompts", key: name, name: name);
merged!(method::ListResources, Resource, 2, ListResourcesResult, "resources", key: uri, name:);
merged!(method::ListResourceTemplates, ResourceTemplate, 3, ListResourceTemplatesResult,
    "resourceTemplates", key: uri_template, name:);

/// One upstream's list as a merge takes it: the name its items are served under, how
/// its warnings name it, and its items as kept.
pub(super) struct Source {
    pub(super) prefix: Option<Arc<str>>,
    pub(super) label: String,
    pub(super) items: Arc<Vec<Kept>>,
}

/// The longest tool name the spec allows.
const MAX_TOOL_NAME: usize = 128;

/// How many refusals one merge logs a line each for; the rest are counted in one.
const LOGGED_REFUSALS: usize = 8;

/// Who serves a name first: an upstream (its place in the merge) or the gateway.
#[derive(Clone, Copy)]
enum Holder {
    Upstream(usize),
    Gateway,
}

/// The list `M` as the gateway serves it now.
pub(super) struct MergedList<M: Merged> {
    lists: Vec<Source>,
    own: Vec<M::Item>,
    /// Each item served, in order: its list and its place there (`own` after the lists).
    served: Vec<(usize, usize)>,
}

impl<M: Merged> MergedList<M> {
    /// The upstreams' `lists`, in upstream order, and the gateway's `own` items after
    /// them, each name checked (see the [module](self)).
    pub(super) fn new(lists: Vec<Source>, own: Vec<M::Item>) -> Self {
        let mut refusals = Refusals::default();
        let mut served = Vec::new();
        {
            let prefixes: Vec<Option<&str>> = lists.iter().map(|l| l.prefix.as_deref()).collect();
            let mut taken: HashMap<&str, Holder> = own
                .iter()
                .filter_map(own_name::<M>)
                .map(|n| (n, Holder::Gateway))
                .collect();
            // A named upstream's names are its own: only it can serve `NAME.x` twice.
            let mut theirs: HashMap<&str, ()> = HashMap::new();
            for (at, source) in lists.iter().enumerate() {
                theirs.clear();
                for (i, item) in source.items.iter().enumerate() {
                    let name = &*item.name;
                    if !M::NAMED {
                        served.push((at, i));
                        continue;
                    }
                    let refusal = match source.prefix.as_deref() {
                        Some(prefix) => check_named::<M>(prefix, name, &own, &mut theirs),
                        None => check_unnamed::<M>(at, name, &prefixes, &mut taken),
                    };
                    match refusal {
                        None => served.push((at, i)),
                        Some(why) => refusals.note(&source.label, name, why, &lists),
                    }
                }
            }
        }
        refusals.log(M::MEMBER);
        served.extend((0..own.len()).map(|i| (lists.len(), i)));
        Self { lists, own, served }
    }

    /// The page of the served items from `cursor`, `page_size` long, as its result.
    pub(super) fn page(
        &self,
        page_size: usize,
        cursor: Option<&str>,
    ) -> Result<M::Result, RpcError> {
        let paging = Paging { page_size };
        let (items, next) = paging.page(&self.served, cursor, |&(at, i)| self.item(at, i))?;
        Ok(M::page(items, next))
    }

    /// The item at `i` of list `at`, as served (read from its text: one that does not
    /// read, which its fetch ruled out, is left off the page).
    fn item(&self, at: usize, i: usize) -> Option<M::Item> {
        match self.lists.get(at) {
            Some(source) => {
                let item = source.items.get(i)?.item::<M>()?;
                Some(M::serve(source.prefix.as_deref(), item))
            }
            None => self.own.get(i).cloned(),
        }
    }
}

/// Why a name is not served.
#[derive(Clone, Copy)]
enum Why {
    /// It breaks the spec's rules for a tool name.
    Unruly,
    /// It begins with the name of the (named) upstream at this place of the merge.
    Prefixed(usize),
    /// It is served already, by this holder.
    Taken(Holder),
    /// Its upstream lists it twice.
    Twice,
}

/// `name`, listed by the upstream called `prefix`: refused if its served name breaks
/// the rules, it lists it twice, or the gateway serves that name itself.
fn check_named<'a, M: Merged>(
    prefix: &str,
    name: &'a str,
    own: &[M::Item],
    theirs: &mut HashMap<&'a str, ()>,
) -> Option<Why> {
    if M::RULED && !valid_tool_name(prefix.len() + 1 + name.len(), name) {
        return Some(Why::Unruly);
    }
    let mut gateways = own.iter().filter_map(own_name::<M>);
    if gateways.any(|g| names::own(prefix, g) == Some(name)) {
        return Some(Why::Taken(Holder::Gateway));
    }
    theirs.insert(name, ()).map(|()| Why::Twice)
}

/// `name`, listed by the unnamed upstream at `at`: refused if it breaks the rules,
/// begins with a named upstream's `NAME.`, or is served already.
fn check_unnamed<'a, M: Merged>(
    at: usize,
    name: &'a str,
    prefixes: &[Option<&str>],
    taken: &mut HashMap<&'a str, Holder>,
) -> Option<Why> {
    if M::RULED && !valid_tool_name(name.len(), name) {
        return Some(Why::Unruly);
    }
    if let Some((prefix, _)) = name.split_once(SEPARATOR) {
        if let Some(owner) = prefixes.iter().position(|p| *p == Some(prefix)) {
            return Some(Why::Prefixed(owner));
        }
    }
    match taken.get(name) {
        Some(Holder::Upstream(first)) if *first == at => Some(Why::Twice),
        Some(holder) => Some(Why::Taken(*holder)),
        None => {
            taken.insert(name, Holder::Upstream(at));
            None
        }
    }
}

/// The name of an item of `M` the gateway serves itself, if its items have names.
fn own_name<M: Merged>(item: &M::Item) -> Option<&str> {
    M::NAMED.then(|| M::key(item))
}

/// Whether a tool name of `len` bytes, ending in `name`, keeps the spec's rules: 1 to
/// 128 characters, each an ASCII letter or digit, `_`, `-` or `.`.
pub(super) fn valid_tool_name(len: usize, name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&len)
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The refusals of one merge, the first few logged a line each.
#[derive(Default)]
struct Refusals {
    count: usize,
}

impl Refusals {
    fn note(&mut self, upstream: &str, name: &str, why: Why, lists: &[Source]) {
        self.count += 1;
        if self.count > LOGGED_REFUSALS {
            return;
        }
        // A name that breaks the rules may be long, or hold anything: logged shortened.
        let name: String = name.escape_debug().take(MAX_TOOL_NAME).collect();
        let other = |at: usize| lists.get(at).map(|l| l.label.as_str()).unwrap_or_default();
        match why {
            Why::Unruly => {
                tracing::warn!(%upstream, name, "a name outside the spec's rules (1 to 128 of A-Z a-z 0-9 _ - .) is not served")
            }
            Why::Twice => {
                tracing::warn!(%upstream, name, "an upstream lists a name twice: served once")
            }
            Why::Prefixed(owner) => {
                tracing::warn!(%upstream, name, other = %other(owner), "an unnamed upstream's name would route to another upstream: not served")
            }
            Why::Taken(Holder::Upstream(first)) => {
                tracing::warn!(%upstream, name, other = %other(first), "two upstreams list one name: served for the first only")
            }
            Why::Taken(Holder::Gateway) => {
                tracing::warn!(%upstream, name, other = "the gateway", "an upstream lists a name the gateway serves itself: not served")
            }
        }
    }

    fn log(&self, member: &str) {
        if self.count > LOGGED_REFUSALS {
            let more = self.count - LOGGED_REFUSALS;
            tracing::warn!(
                member,
                more,
                "more names refused in this merge, not logged one by one"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_keep_the_specs_rules() {
        assert!(valid_tool_name(9, "get_user."));
        assert!(valid_tool_name(128, &"a".repeat(128)));
        assert!(!valid_tool_name(129, &"a".repeat(129)));
        assert!(!valid_tool_name(0, ""));
        assert!(!valid_tool_name(4, "a\u{7}bc"));
        assert!(!valid_tool_name(5, "a bc/"));
        assert!(!valid_tool_name(2, "é"));
    }
}
