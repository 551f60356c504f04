//! The skills extension's rules both sides apply (SEP-2640): where a `SKILL.md`'s front
//! matter is and what it must hold, what a skill may be called, a file's digest, and
//! what one skill may weigh.

use serde_json::{Map, Value};

use crate::types::ext_skills as ext;

/// The extension's identifier, as declared under `capabilities.extensions`.
pub(crate) const EXTENSION: &str = ext::EXTENSION_ID;

/// The file that makes a directory a skill.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// The most files one skill may list (its `SKILL.md` among them).
pub(crate) const MAX_FILES: usize = 512;

/// The most bytes one skill's files may add up to.
pub(crate) const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The most bytes of front matter read as YAML: a name, a description and a few
/// fields of metadata fit many times over.
const MAX_FRONT_MATTER: usize = 64 * 1024;

/// The longest description the Agent Skills specification allows.
const MAX_DESCRIPTION: usize = 1024;

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest as _, Sha256};
    use std::fmt::Write as _;
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The front matter of a `SKILL.md`: the YAML between its opening `---` line and the
/// next `---` line, as a JSON object, with a `name` and a non-empty `description`.
pub(crate) fn front_matter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Err("it does not begin with a `---` line of YAML front matter".into());
    };
    let mut yaml_len = None;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches([' ', '\t'])
            == "---"
        {
            yaml_len = Some(at);
            break;
        }
        at += line.len();
    }
    let Some(len) = yaml_len else {
        return Err("its front matter has no closing `---` line".into());
    };
    if len > MAX_FRONT_MATTER {
        return Err(format!("its front matter is over {MAX_FRONT_MATTER} bytes"));
    }
    let yaml = &rest[..len];
    let value: Value =
        serde_saphyr::from_str(yaml).map_err(|e| format!("its front matter is not YAML: {e}"))?;
    let Value::Object(fields) = value else {
        return Err("its front matter is not a mapping of fields".into());
    };
    match fields.get("name") {
        Some(Value::String(name)) if !name.is_empty() => {}
        _ => return Err("its front matter has no `name`".into()),
    }
    match fields.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() => {}
        _ => return Err("its front matter has no `description`".into()),
    }
    Ok(fields)
}

/// Whether `name` is a skill name: 1 to 64 of `a-z`, `0-9` and `-`, neither starting
/// nor ending with `-`, and no `--`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a skill name: 1 to 64 lowercase letters, digits and single \
             hyphens, neither first nor last"
        ))
    }
}

/// Whether `description` is within the Agent Skills specification's length.
pub(crate) fn check_description(description: &str) -> Result<(), String> {
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "its description is over {MAX_DESCRIPTION} characters"
        ));
    }
    Ok(())
}

/// The first field whose values differ between two front matters, a field missing on
/// one side counting as `null` and numbers compared by value (`1` and `1.0` agree).
pub(crate) fn first_difference(a: &Map<String, Value>, b: &Map<String, Value>) -> Option<String> {
    a.keys()
        .chain(b.keys())
        .find(|key| {
            let left = a.get(*key).unwrap_or(&Value::Null);
            let right = b.get(*key).unwrap_or(&Value::Null);
            !same(left, right)
        })
        .cloned()
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => first_difference(x, y).is_none(),
        _ => a == b,
    }
}

/// A front matter as the entry's type: its `name`, `description` and every other field.
pub(crate) fn entry_front_matter(mut fields: Map<String, Value>) -> ext::SkillFrontmatter {
    let text = |v: Option<Value>| match v {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let name = text(fields.remove("name"));
    let description = text(fields.remove("description"));
    let mut front = ext::SkillFrontmatter::new(description, name);
    front.extra = fields;
    front
}

/// An entry's front matter as the fields of a `SKILL.md`'s.
pub(crate) fn fields_of(front: &ext::SkillFrontmatter) -> Map<String, Value> {
    let mut fields = front.extra.clone();
    fields.insert("name".into(), Value::String(front.name.clone()));
    fields.insert(
        "description".into(),
        Value::String(front.description.clone()),
    );
    fields
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn front_matter_is_the_yaml_between_the_dashes() {
        let md = "\u{feff}---\r\nname: pdf-tools\r\ndescription: Fill PDF forms\r\nversion: 1.0\r\n---\r\n\nBody\n";
        let fields = front_matter(md).unwrap();
        assert_eq!(fields["name"], "pdf-tools");
        assert_eq!(fields["description"], "Fill PDF forms");
        assert_eq!(fields["version"].as_f64(), Some(1.0));
    }

    #[test]
    fn a_skill_md_without_front_matter_or_a_field_is_refused() {
        for (md, says) in [
            ("# Title\n", "does not begin"),
            ("---\nname: a\n", "no closing"),
            ("---\nname: a\n---\n", "no `description`"),
            ("---\ndescription: d\n---\n", "no `name`"),
            ("---\n- a\n- b\n---\n", "not a mapping"),
            ("---\nname: [unclosed\n---\n", "not YAML"),
        ] {
            let err = front_matter(md).unwrap_err();
            assert!(err.contains(says), "{md:?}: {err}");
        }
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "pdf-tools", "x9", &"a".repeat(64)] {
            check_name(good).unwrap();
        }
        for bad in ["", "-a", "a-", "a--b", "PDF", "a_b", "a b", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn front_matters_differ_by_field_and_agree_on_equal_numbers() {
        let a = front_matter("---\nname: a\ndescription: d\nv: 1\n---\n").unwrap();
        let b = front_matter("---\ndescription: d\nname: a\nv: 1.0\n---\n").unwrap();
        assert_eq!(first_difference(&a, &b), None);
        let c = front_matter("---\nname: a\ndescription: other\nv: 1\n---\n").unwrap();
        assert_eq!(first_difference(&a, &c).as_deref(), Some("description"));
        let d = front_matter("---\nname: a\ndescription: d\n---\n").unwrap();
        assert_eq!(first_difference(&a, &d).as_deref(), Some("v"));
    }

    #[test]
    fn a_digest_is_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
