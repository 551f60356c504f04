//! Skills (`io.modelcontextprotocol/skills`, SEP-2640): a server publishes agent skills,
//! each a directory with a `SKILL.md` (YAML front matter, then instructions) and the
//! files it refers to, and a host lists them and fetches a skill's files only when it
//! uses the skill, checking each against the digest and size the listing gave.
//!
//! On the server, [`Skills`] is an extension: from a directory or from code, every file
//! read once, its digest and size computed by tern, every name checked at registration.
//! Added to an [`McpServer`](crate::mcp::McpServer), it declares the extension (with
//! `directoryRead`), answers `skills/list`, `skills/get` and `resources/directory/read`,
//! and serves each file as a resource at `skill://<skill path>/<file>`.
//!
//! ```
//! use tern_mcp::mcp::McpServer;
//! use tern_mcp::skills::Skills;
//!
//! let skills = Skills::new().skill(
//!     "pdf-tools",
//!     [
//!         ("SKILL.md", "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n\nSee references/FORMS.md.\n"),
//!         ("references/FORMS.md", "Which form for which office.\n"),
//!     ],
//! )?;
//! let mcp = McpServer::new("docs", "1.0.0").extension(skills);
//! # let _ = mcp.server()?;
//! # Ok::<(), tern_mcp::Error>(())
//! ```
//!
//! On the client, [`Client::skills`](crate::client::Client::skills) lists them and
//! [`Client::read_skill_file`](crate::client::Client::read_skill_file) fetches one file
//! of a listed skill, refusing what does not match its entry.

mod client;
mod load;
mod serve;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::ConfigError;
use crate::protocol::skills as rules;
use crate::types::ext_skills as ext;

/// The skills a server publishes: an extension for
/// [`McpServer::extension`](crate::mcp::McpServer::extension). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Skills {
    skills: Arc<Vec<Published>>,
}

/// One skill: its entry as listed, and its files as served.
#[derive(Debug, Clone)]
struct Published {
    entry: ext::Skill,
    files: Vec<File>,
}

/// One file of a skill, read once.
#[derive(Clone)]
struct File {
    uri: String,
    /// Its path under the skill's directory.
    path: String,
    mime_type: &'static str,
    bytes: Arc<[u8]>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("uri", &self.uri)
            .field("mime_type", &self.mime_type)
            .field("len", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl Skills {
    /// No skills yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every skill under `dir`: each directory below it that holds a `SKILL.md` is a
    /// skill, its path under `dir` the skill's path (`acme/billing/refunds`), every file
    /// below it one of its files (hidden files and symbolic links left out).
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let mut skills = Self::new();
        for (path, files) in load::skill_dirs(dir.as_ref())? {
            skills = skills.skill(&path, files)?;
        }
        Ok(skills)
    }

    /// Adds the skill at `path` (`pdf-tools`, or `acme/billing/refunds`) with its files,
    /// each a path under the skill's directory and its bytes; `SKILL.md` among them.
    /// Refused: no `SKILL.md` or no front matter in it, a last path segment that is not
    /// the front matter's `name` or not a skill name, a path that is not a relative one of
    /// legal file names (none empty, `.`, `..` or holding NUL), more than 512 files or
    /// 16 MiB, a skill already added at that path. A name a URI cannot hold as it is
    /// (`my notes.md`) is served percent-encoded (`skill://pdf-tools/my%20notes.md`).
    pub fn skill<P, B>(
        mut self,
        path: &str,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<Self, ConfigError>
    where
        P: Into<String>,
        B: Into<Vec<u8>>,
    {
        let files: BTreeMap<String, Vec<u8>> = files
            .into_iter()
            .map(|(p, b)| (p.into(), b.into()))
            .collect();
        let published = publish(path, files)?;
        if self
            .skills
            .iter()
            .any(|s| s.entry.uri == published.entry.uri)
        {
            return Err(invalid(path, "a skill is already published at this path"));
        }
        Arc::make_mut(&mut self.skills).push(published);
        Ok(self)
    }
}

fn invalid(path: &str, why: impl std::fmt::Display) -> ConfigError {
    ConfigError::Invalid(format!("skill `{path}`: {why}"))
}

/// Whether a skill's files are within the count and the bytes a skill may have.
fn check_size(files: &BTreeMap<String, Vec<u8>>) -> Result<(), String> {
    if files.len() > rules::MAX_FILES {
        return Err(format!(
            "{} files, over the {} a skill may list",
            files.len(),
            rules::MAX_FILES
        ));
    }
    let total: u64 = files.values().map(|b| b.len() as u64).sum();
    if total > rules::MAX_BYTES {
        return Err(format!(
            "{total} bytes, over the {} a skill may hold",
            rules::MAX_BYTES
        ));
    }
    Ok(())
}

/// Checks a skill's path, files and front matter, and computes its entry.
fn publish(path: &str, files: BTreeMap<String, Vec<u8>>) -> Result<Published, ConfigError> {
    load::check_path(path).map_err(|e| invalid(path, e))?;
    let name = path.rsplit('/').next().unwrap_or(path);
    rules::check_name(name).map_err(|e| invalid(path, e))?;
    let Some(skill_md) = files.get(rules::SKILL_MD) else {
        return Err(invalid(path, "it has no SKILL.md"));
    };
    let text = std::str::from_utf8(skill_md).map_err(|_| invalid(path, "SKILL.md is not UTF-8"))?;
    let fields = rules::front_matter(text).map_err(|e| invalid(path, format!("SKILL.md: {e}")))?;
    let front = rules::entry_front_matter(fields);
    if front.name != name {
        return Err(invalid(
            path,
            format!(
                "SKILL.md names the skill `{}`; its path must end in its name",
                front.name
            ),
        ));
    }
    rules::check_description(&front.description).map_err(|e| invalid(path, e))?;
    check_size(&files).map_err(|e| invalid(path, e))?;
    let root = format!("skill://{}", load::uri_path(path));
    let mut listed = Vec::with_capacity(files.len());
    let mut served = Vec::with_capacity(files.len());
    for (file, bytes) in files {
        load::check_path(&file).map_err(|e| invalid(path, format!("file `{file}`: {e}")))?;
        let uri = format!("{root}/{}", load::uri_path(&file));
        listed.push(ext::SkillResource::new(
            rules::digest(&bytes),
            bytes.len() as u64,
            uri.clone(),
        ));
        served.push(File {
            uri,
            mime_type: load::mime_type(&file),
            path: file,
            bytes: bytes.into(),
        });
    }
    let entry = ext::Skill::new(
        front,
        ext::SkillResources::Many(listed),
        format!("{root}/{}", rules::SKILL_MD),
    );
    Ok(Published {
        entry,
        files: served,
    })
}
