//! The skills served: the extension's declaration, `skills/list`, `skills/get` and
//! `resources/directory/read`, and each file registered as a resource.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{File, Published, Skills, load};
use crate::jsonrpc::RpcError;
use crate::mcp::paging::Paging;
use crate::mcp::{McpExtension, McpServer, ResourceBody};
use crate::protocol::skills as rules;
use crate::server::{ProtocolExtension, RequestContext, ServerBuilder};
use crate::types::ext_skills as ext;
use crate::types::ext_skills::method::{GetSkill, ListSkills, ReadResourceDirectory};
use crate::types::v2026_07_28::{PaginatedRequestParams, Resource};

/// How many skills, or directory entries, one page holds.
const PAGE: Paging = Paging { page_size: 100 };

/// The MIME type of a directory resource.
const DIRECTORY: &str = "inode/directory";

impl ProtocolExtension for Skills {
    fn id(&self) -> &'static str {
        rules::EXTENSION
    }

    fn settings(&self) -> Map<String, Value> {
        let mut settings = Map::new();
        settings.insert("directoryRead".into(), Value::Bool(true));
        settings
    }

    fn routes(&self, server: ServerBuilder) -> ServerBuilder {
        let (a, b, c) = (self.clone(), self.clone(), self.clone());
        server
            .handle::<ListSkills, _, _>(move |ctx, params| list(a.clone(), ctx, params))
            .handle::<GetSkill, _, _>(move |ctx, params| get(b.clone(), ctx, params))
            .handle::<ReadResourceDirectory, _, _>(move |ctx, params| {
                directory(c.clone(), ctx, params)
            })
    }
}

impl McpExtension for Skills {
    fn register(&self, server: &McpServer) {
        for file in self.skills.iter().flat_map(|s| &s.files) {
            register_file(server, &self.skills, file);
        }
    }
}

/// Serves `file` as a resource; a skill's `SKILL.md` named and described by its front
/// matter.
fn register_file(server: &McpServer, skills: &[Published], file: &File) {
    let entry = skills
        .iter()
        .find(|s| s.entry.uri == file.uri)
        .map(|s| &s.entry.frontmatter);
    let name = entry.map_or(file.path.as_str(), |f| f.name.as_str());
    let mut builder = server
        .resource(file.uri.clone(), name)
        .mime_type(file.mime_type);
    if let Some(front) = entry {
        builder = builder.description(front.description.clone());
    }
    // Written once and shared by every read: readers slow to take a large file hold
    // one copy of it between them.
    builder.contents(match std::str::from_utf8(&file.bytes) {
        Ok(s) if is_text(file.mime_type) => ResourceBody::Text(s.to_owned()),
        _ => ResourceBody::Blob(file.bytes.to_vec()),
    });
}

fn is_text(mime_type: &str) -> bool {
    mime_type.starts_with("text/")
        || matches!(
            mime_type,
            "application/json" | "application/yaml" | "application/toml" | "application/xml"
        )
}

async fn list(
    skills: Skills,
    _ctx: RequestContext,
    params: PaginatedRequestParams,
) -> Result<ext::ListSkillsResult, RpcError> {
    let (page, next) = PAGE.page(&skills.skills, params.cursor.as_deref(), |s| {
        Some(s.entry.clone())
    })?;
    let mut result = ext::ListSkillsResult::new(page);
    result.next_cursor = next;
    Ok(result)
}

async fn get(
    skills: Skills,
    _ctx: RequestContext,
    params: ext::GetSkillRequestParams,
) -> Result<ext::GetSkillResult, RpcError> {
    match skills.skills.iter().find(|s| s.entry.uri == params.uri) {
        Some(skill) => Ok(ext::GetSkillResult::new(skill.entry.clone())),
        None => Err(RpcError::invalid_params(format!(
            "No skill is served at {}",
            params.uri
        ))),
    }
}

async fn directory(
    skills: Skills,
    _ctx: RequestContext,
    params: ext::ReadResourceDirectoryRequestParams,
) -> Result<ext::ReadResourceDirectoryResult, RpcError> {
    let children = children(&skills.skills, &params.uri).ok_or_else(|| {
        RpcError::invalid_params(format!("{} is not a directory resource", params.uri))
    })?;
    let (page, next) = PAGE.page(&children, params.cursor.as_deref(), |c| Some(c.clone()))?;
    let mut result = ext::ReadResourceDirectoryResult::new(page);
    result.next_cursor = next;
    Ok(result)
}

/// The direct children of the directory at `uri` (a skill's root, or a directory
/// within or above one), or `None` when no directory is there.
fn children(skills: &[Published], uri: &str) -> Option<Vec<Resource>> {
    let prefix = format!("{uri}/");
    let mut found = false;
    let mut children: BTreeMap<&str, Resource> = BTreeMap::new();
    for file in skills.iter().flat_map(|s| &s.files) {
        let Some(rest) = file.uri.strip_prefix(&prefix) else {
            continue;
        };
        found = true;
        let (name, is_dir) = match rest.split_once('/') {
            Some((dir, _)) => (dir, true),
            None => (rest, false),
        };
        children.entry(name).or_insert_with(|| {
            let mut child = Resource::new(load::segment_name(name), format!("{prefix}{name}"));
            if is_dir {
                child.mime_type = Some(DIRECTORY.to_owned());
            } else {
                child.mime_type = Some(file.mime_type.to_owned());
                child.size = i64::try_from(file.bytes.len()).ok();
            }
            child
        });
    }
    found.then(|| children.into_values().collect())
}
