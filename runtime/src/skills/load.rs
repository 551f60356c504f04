//! Reading skills from a directory, and what a skill's paths may be.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

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
                    let over = || {
                        let why = format!("the skill `{root}` is over {} bytes", rules::MAX_BYTES);
                        unreadable(dir, why)
                    };
                    let budget = rules::MAX_BYTES.saturating_sub(total);
                    let bytes = read_bounded(path, budget).map_err(|e| match e {
                        ReadError::Io(e) => unreadable(path, e),
                        ReadError::TooLarge => over(),
                    })?;
                    read.insert(rel, bytes.clone());
                    bytes
                }
            };
            total += bytes.len() as u64;
            if total > rules::MAX_BYTES {
                return Err(unreadable(
                    dir,
                    format!("the skill `{root}` is over {} bytes", rules::MAX_BYTES),
                ));
            }
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

/// What a URI segment keeps as it is (RFC 3986's `pchar` less `%`): every other byte of a
/// file's name is written `%XX`.
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b'@');

/// Whether `path` is a relative path of legal file names: segments none empty, `.` or
/// `..`, and without NUL (the one byte besides `/` no file name holds). Any other name
/// is served, its URI percent-encoded ([`uri_path`]).
pub(super) fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    for segment in path.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!("`{path}` is not a clean relative path"));
        }
        if segment.contains('\0') {
            return Err(format!(
                "`{}` holds a NUL, which no file name can",
                path.escape_debug()
            ));
        }
    }
    Ok(())
}

/// `path` as a URI's path: each segment percent-encoded (`my notes.md` is `my%20notes.md`).
pub(super) fn uri_path(path: &str) -> String {
    let mut uri = String::with_capacity(path.len());
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            uri.push('/');
        }
        uri.extend(utf8_percent_encode(segment, ENCODED));
    }
    uri
}

/// A URI path segment [`uri_path`] wrote, as the file name it encodes.
pub(super) fn segment_name(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

/// The bytes of the file at `path`, refused past `budget` bytes: what is read is
/// counted, whatever its metadata says (a file that grows, or one that says it is empty).
fn read_bounded(path: &Path, budget: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(budget.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > budget {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Why a file was not read.
enum ReadError {
    Io(std::io::Error),
    TooLarge,
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
        for good in [
            "SKILL.md",
            "references/FORMS.md",
            "a/b-c_d.e~f",
            "my notes.md",
        ] {
            check_path(good).unwrap();
        }
        for bad in ["", "/abs", "a//b", "a/", "../up", "a/./b", "nul\0.md"] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_legal_file_name_is_percent_encoded_in_its_uri_and_read_back_from_it() {
        for (path, uri) in [
            ("references/FORMS.md", "references/FORMS.md"),
            ("my notes.md", "my%20notes.md"),
            ("q?x/h#x", "q%3Fx/h%23x"),
            ("100%.txt", "100%25.txt"),
            ("b\\s", "b%5Cs"),
            ("caf\u{e9}.md", "caf%C3%A9.md"),
            ("tab\there", "tab%09here"),
        ] {
            assert_eq!(uri_path(path), uri);
            let back: Vec<String> = uri.split('/').map(segment_name).collect();
            assert_eq!(back.join("/"), path);
        }
    }

    #[test]
    fn a_file_is_read_up_to_its_budget_whatever_its_metadata_says() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [7u8; 100]).unwrap();
        assert_eq!(read_bounded(&path, 100).ok().unwrap().len(), 100);
        assert!(matches!(read_bounded(&path, 99), Err(ReadError::TooLarge)));
        // /dev/zero says it holds nothing and never ends: read to the budget, then refused.
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 1 << 20),
            Err(ReadError::TooLarge)
        ));
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
