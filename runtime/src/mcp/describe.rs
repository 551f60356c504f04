//! What every listed entry (tool, prompt, resource, template) shows beside its name: a
//! display title, icons a client may draw, and `_meta` for its extensions (an MCP App's
//! `ui` resource, for one), written as each builder's methods by one macro so the four
//! say it the same way.

/// Writes `title`, `icons` and `meta` on `$builder`, setting them on `self.$entry`.
macro_rules! describe {
    ($builder:ident, $entry:ident) => {
        impl $builder<'_> {
            /// A display name, shown in place of the name.
            pub fn title(mut self, title: impl Into<String>) -> Self {
                self.$entry.title = Some(title.into());
                self
            }

            /// Icons a client may draw beside it (PNG and JPEG everywhere; SVG and WebP
            /// where the client draws them).
            pub fn icons(
                mut self,
                icons: impl IntoIterator<Item = crate::types::v2026_07_28::Icon>,
            ) -> Self {
                self.$entry.icons = Some(icons.into_iter().collect());
                self
            }

            /// Its `_meta`: members for the extensions that read it, listed as given.
            pub fn meta(mut self, meta: serde_json::Map<String, serde_json::Value>) -> Self {
                self.$entry.meta = Some(crate::types::v2026_07_28::MetaObject(meta));
                self
            }
        }
    };
}

describe!(ToolBuilder, tool);
describe!(PromptBuilder, prompt);
describe!(ResourceBuilder, resource);
describe!(TemplateBuilder, template);

use super::{PromptBuilder, ResourceBuilder, TemplateBuilder, ToolBuilder};
