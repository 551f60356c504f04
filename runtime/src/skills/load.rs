//! Reading skills from a directory, and what a skill's paths may be.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::ConfigError;
use crate::protocol::skills as rules;

/// How deep below the skills directory a file may lie.
const MAX_DEPTH: usize = 16;

/// How many directory entries one walk looks at before it gives up.
const MAX_ENTRIES: usize = 100_000;

/// A skill's files, each by its path under the skill's directory.
pub(super) type Files = BTreeMap<String, Vec<u8>>;

/// The skills under `dir`: each directory that holds a `SKILL.md`, by its path under
/// `dir`, with every file below it (nested skills' files too), read once.
pub(super) fn skill_dirs(dir: &Path) -> Result<Vec<(String, Files)>, ConfigError> {
    let mut found = Vec::new();
    let mut seen = 0;
    walk(dir, "", 0, &mut seen, &mut found)?;
    let roots: Vec<&str> = found
        .iter()
        .filter_map(|(rel, _)| rel.strip_suffix(rules::SKILL_MD))
        .filter_map(|parent| match parent {
            "" => None,
            p => p.strip_suffix('/'),
        })
        .collect();
    if found.iter().any(|(rel, _)| rel == rules::SKILL_MD) {
        return Err(unreadable(
            dir,
            "holds a SKILL.md itself: put each skill in a directory of its own below it",
        ));
    }
    let mut skills = Vec::with_capacity(roots.len());
    let mut read: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for root in &roots {
        let prefix = format!("{root}/");
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        for (rel, path) in &found {
            let Some(inner) = rel.strip_prefix(&prefix) else {
                continue;
            };
            let bytes = match read.get(rel.as_str()) {
                Some(bytes) => bytes.clone(),
                None => {
                    let len = std::fs::symlink_metadata(path)
                        .map(|m| m.len())
                        .unwrap_or(0);
                    total += len;
                    if total > rules::MAX_BYTES {
                        return Err(unreadable(
                            dir,
                            format!("the skill `{root}` is over {} bytes", rules::MAX_BYTES),
                        ));
                    }
                    let bytes = std::fs::read(path).map_err(|e| unreadable(path, e))?;
                    read.insert(rel, bytes.clone());
                    bytes
                }
            };
            files.insert(inner.to_owned(), bytes);
        }
        skills.push(((*root).to_owned(), files));
    }
    Ok(skills)
}

/// Every regular file below `dir`, by its path relative to the walk's start.
fn walk(
    dir: &Path,
    rel: &str,
    depth: usize,
    seen: &mut usize,
    found: &mut Vec<(String, PathBuf)>,
) -> Result<(), ConfigError> {
    if depth > MAX_DEPTH {
        return Err(unreadable(
            dir,
            format!("is more than {MAX_DEPTH} levels deep"),
        ));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))?;
    let mut children: Vec<(String, PathBuf, std::fs::FileType)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| unreadable(dir, e))?;
        *seen += 1;
        if *seen > MAX_ENTRIES {
            return Err(unreadable(dir, format!("holds over {MAX_ENTRIES} entries")));
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(unreadable(&entry.path(), "its name is not UTF-8"));
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| unreadable(&entry.path(), e))?;
        children.push((name, entry.path(), kind));
    }
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, path, kind) in children {
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if kind.is_dir() {
            walk(&path, &child, depth + 1, seen, found)?;
        } else if kind.is_file() {
            found.push((child, path));
        }
    }
    Ok(())
}

fn unreadable(path: &Path, why: impl std::fmt::Display) -> ConfigError {
    ConfigError::Invalid(format!("skills directory {}: {why}", path.display()))
}

/// Whether `path` is a clean relative path: segments of letters, digits and
/// `-._~!$&'()*+,;=@`, none empty, `.` or `..`.
pub(super) fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    for segment in path.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!("`{path}` is not a clean relative path"));
        }
        if let Some(c) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=@".contains(*c)))
        {
            return Err(format!("`{path}` holds {c:?}, which a skill URI cannot"));
        }
    }
    Ok(())
}

/// The MIME type a file is served with, by its extension.
pub(super) fn mime_type(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_skill_path_is_clean_and_relative() {
        for good in ["SKILL.md", "references/FORMS.md", "a/b-c_d.e~f"] {
            check_path(good).unwrap();
        }
        for bad in [
            "", "/abs", "a//b", "a/", "../up", "a/./b", "sp ace", "q?x", "h#x", "b\\s",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_directory_of_skills_is_read_with_nested_skills_and_no_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("pdf/SKILL.md", "---\nname: pdf\ndescription: d\n---\n");
        write("pdf/references/FORMS.md", "forms");
        write("pdf/.cache", "hidden");
        write(
            "pdf/inner/SKILL.md",
            "---\nname: inner\ndescription: d\n---\n",
        );
        write("notes/README.md", "not a skill");
        let skills = skill_dirs(dir.path()).unwrap();
        let names: Vec<(&str, Vec<&str>)> = skills
            .iter()
            .map(|(p, f)| (p.as_str(), f.keys().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            names,
            [
                (
                    "pdf",
                    vec!["SKILL.md", "inner/SKILL.md", "references/FORMS.md"]
                ),
                ("pdf/inner", vec!["SKILL.md"]),
            ]
        );
    }
}
