//! The host side of the skills extension: list a server's skills, and fetch a skill's
//! file only when asked, used only once it matches the skill's entry (its digest, its
//! size and, for the `SKILL.md`, its front matter).

use super::Client;
use crate::error::detail::{ProtocolError, SkillFailure};
use crate::protocol::skills as rules;
use crate::types::ext_skills::method::GetSkill;
use crate::types::ext_skills::{GetSkillRequestParams, Skill, SkillResources};
use crate::types::v2026_07_28::AnyResourceContents;

/// See [`Client::get_skill`].
pub(super) async fn get(client: &Client, uri: String) -> crate::Result<Skill> {
    let result = client
        .request::<GetSkill>(GetSkillRequestParams::new(uri))
        .await?;
    Ok(result.skill)
}

/// See [`Client::read_skill_file`].
pub(super) async fn read_file(client: &Client, skill: &Skill, uri: &str) -> crate::Result<Vec<u8>> {
    let refuse = |failure| ProtocolError::SkillFile {
        uri: uri.to_owned(),
        failure,
    };
    let listed = match &skill.resources {
        SkillResources::Many(files) => {
            let Some(file) = files.iter().find(|f| f.uri == uri) else {
                return Err(refuse(SkillFailure::Unlisted).into());
            };
            Some(file)
        }
        SkillResources::Dynamic(_) => {
            let root = skill
                .uri
                .strip_suffix(rules::SKILL_MD)
                .unwrap_or(&skill.uri);
            if !(uri == skill.uri || (uri.starts_with(root) && uri.len() > root.len())) {
                return Err(refuse(SkillFailure::Unlisted).into());
            }
            None
        }
    };
    let result = client.read_resource(uri).await?;
    let bytes = contents_of(result.contents, uri).ok_or_else(|| refuse(SkillFailure::Missing))?;
    if let Some(file) = listed {
        let served = bytes.len() as u64;
        if served != file.size {
            return Err(refuse(SkillFailure::Size {
                listed: file.size,
                served,
            })
            .into());
        }
        if rules::digest(&bytes) != file.digest {
            return Err(refuse(SkillFailure::Digest).into());
        }
    }
    if uri == skill.uri {
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| refuse(SkillFailure::FrontMatter("SKILL.md is not UTF-8".into())))?;
        let fields = rules::front_matter(text).map_err(|e| refuse(SkillFailure::FrontMatter(e)))?;
        if let Some(field) = rules::first_difference(&fields, &rules::fields_of(&skill.frontmatter))
        {
            return Err(refuse(SkillFailure::FrontMatter(format!("`{field}`"))).into());
        }
    }
    Ok(bytes)
}

/// The bytes of the contents for `uri` (text as UTF-8, a blob decoded), or of the only
/// contents when none names it.
fn contents_of(contents: Vec<AnyResourceContents>, uri: &str) -> Option<Vec<u8>> {
    let named = |c: &AnyResourceContents| match c {
        AnyResourceContents::Text(t) => t.uri == uri,
        AnyResourceContents::Blob(b) => b.uri == uri,
    };
    let only = contents.len() == 1;
    let content = contents.into_iter().find(|c| only || named(c))?;
    match content {
        AnyResourceContents::Text(t) => Some(t.text.into_bytes()),
        AnyResourceContents::Blob(b) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(b.blob)
                .ok()
        }
    }
}
