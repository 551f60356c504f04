//! The host's half of the skills extension, the methods it adds to the client: list a
//! server's skills, and fetch a skill's file only when asked, used only once it matches
//! the skill's entry (its digest, its size and, for the `SKILL.md`, its front matter).
//! A client declares nothing to use them: the server's declaration is what counts.

use crate::client::{Client, ListMethod};
use crate::error::detail::{ProtocolError, SkillFailure};
use crate::protocol::skills as rules;
use crate::types::ext_skills::method::{GetSkill, ListSkills};
use crate::types::ext_skills::{GetSkillRequestParams, ListSkillsResult, Skill, SkillResources};
use crate::types::v2026_07_28::AnyResourceContents;

impl crate::client::sealed::Sealed for ListSkills {}

impl ListMethod for ListSkills {
    type Item = Skill;
    fn split(result: ListSkillsResult) -> (Vec<Skill>, Option<String>) {
        (result.skills, result.next_cursor)
    }
}

impl Client {
    /// Every skill the server publishes (the skills extension), following `nextCursor`
    /// (see [`list_all`](Self::list_all)). Nothing of any skill is fetched: a host
    /// fetches a skill's files when it uses the skill, with
    /// [`read_skill_file`](Self::read_skill_file).
    pub async fn skills(&self) -> crate::Result<Vec<Skill>> {
        self.list_all::<ListSkills>().await
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`, listed or not.
    pub async fn get_skill(&self, uri: impl Into<String>) -> crate::Result<Skill> {
        let params = GetSkillRequestParams::new(uri.into());
        Ok(self.request::<GetSkill>(params).await?.skill)
    }

    /// The bytes of the file at `uri` of `skill`, read from the server and used only if
    /// they match the skill's entry: the entry lists the file (or, for a skill whose
    /// files are `"dynamic"`, the file is inside the skill's directory), and its size
    /// and SHA-256 are the listed ones; the `SKILL.md`'s front matter is, field by field,
    /// the entry's. Anything else is refused with
    /// [`ProtocolError::SkillFile`], saying what
    /// failed, and the bytes are dropped.
    pub async fn read_skill_file(&self, skill: &Skill, uri: &str) -> crate::Result<Vec<u8>> {
        read_file(self, skill, uri).await
    }
}

/// See [`Client::read_skill_file`].
async fn read_file(client: &Client, skill: &Skill, uri: &str) -> crate::Result<Vec<u8>> {
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
