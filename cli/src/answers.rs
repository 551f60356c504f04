//! Answers given before the questions are asked: `--answer KEY.FIELD=VALUE`,
//! `--answers FILE`, `--accept KEY`, `--decline KEY`, `--cancel KEY`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::cli::Answering;
use crate::error::{CliError, Result};

/// What was said in advance about one question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Preset {
    /// Accept, with these fields (raw: read against the form's schema when it is known).
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// The answers given in advance, by question key.
#[derive(Debug, Clone, Default)]
pub(crate) struct Presets(BTreeMap<String, Preset>);

impl Presets {
    /// Reads the answering options; a key given two ways (say declined and answered)
    /// is a usage error.
    pub(crate) fn from_options(options: &Answering) -> Result<Self> {
        let mut presets = Self::default();
        if let Some(path) = &options.answers_file {
            presets.read_file(path)?;
        }
        for answer in &options.answers {
            let (key, field, value) = split_answer(answer)?;
            match presets
                .0
                .entry(key.to_owned())
                .or_insert_with(|| Preset::Accept(Map::new()))
            {
                Preset::Accept(fields) => {
                    fields.insert(field.to_owned(), Value::String(value.to_owned()));
                }
                _ => return Err(twice(key)),
            }
        }
        for key in &options.accept {
            presets
                .0
                .entry(key.clone())
                .or_insert_with(|| Preset::Accept(Map::new()));
        }
        for (keys, preset) in [
            (&options.decline, Preset::Decline),
            (&options.cancel, Preset::Cancel),
        ] {
            for key in keys {
                if presets.0.insert(key.clone(), preset.clone()).is_some() {
                    return Err(twice(key));
                }
            }
        }
        Ok(presets)
    }

    fn read_file(&mut self, path: &Path) -> Result<()> {
        let text = crate::files::read_text(path, crate::files::MAX_FILE_BYTES)
            .map_err(|e| CliError::usage(format!("--answers {}: {e}", path.display())))?;
        let value: Value = serde_json::from_str(&text).map_err(|source| CliError::Json {
            path: path.to_owned(),
            source,
        })?;
        let Value::Object(keys) = value else {
            return Err(CliError::usage(format!(
                "{}: answers are a JSON object {{\"KEY\": {{\"FIELD\": VALUE}}}}",
                path.display()
            )));
        };
        for (key, fields) in keys {
            let preset = match fields {
                Value::Object(fields) => Preset::Accept(fields),
                Value::String(s) if s == "decline" => Preset::Decline,
                Value::String(s) if s == "cancel" => Preset::Cancel,
                Value::String(s) if s == "accept" => Preset::Accept(Map::new()),
                other => {
                    return Err(CliError::usage(format!(
                        "{}: the answer to `{key}` is {other}; give an object of fields, \
                         or \"accept\", \"decline\" or \"cancel\"",
                        path.display()
                    )));
                }
            };
            self.0.insert(key, preset);
        }
        Ok(())
    }

    /// The keys something was said about.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    /// What was said about question `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Preset> {
        self.0.get(key)
    }
}

/// `KEY.FIELD=VALUE` into its parts, the last dot before `=` splitting KEY from FIELD:
/// a key may have dots of its own (a gateway's `NAME.key`), a form's field rarely does.
fn split_answer(answer: &str) -> Result<(&str, &str, &str)> {
    let bad = || {
        CliError::usage(format!(
            "--answer {answer:?}: write it KEY.FIELD=VALUE (KEY the question's key, FIELD \
             the form field)"
        ))
    };
    let (path, value) = answer.split_once('=').ok_or_else(bad)?;
    let (key, field) = path.rsplit_once('.').ok_or_else(bad)?;
    if key.is_empty() || field.is_empty() {
        return Err(bad());
    }
    Ok((key, field, value))
}

fn twice(key: &str) -> CliError {
    CliError::usage(format!(
        "question `{key}` is answered twice (say with --answer and --decline): give one"
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn answers_decline_and_cancel_are_read_by_key() {
        let options = Answering {
            answers: vec!["user.name=Ada Lovelace".into(), "user.age=36".into()],
            decline: vec!["other".into()],
            cancel: vec!["third".into()],
            ..Answering::default()
        };
        let presets = Presets::from_options(&options).unwrap();
        let Some(Preset::Accept(fields)) = presets.get("user") else {
            panic!("answered");
        };
        assert_eq!(fields["name"], "Ada Lovelace");
        assert_eq!(presets.get("other"), Some(&Preset::Decline));
        assert_eq!(presets.get("third"), Some(&Preset::Cancel));
    }

    #[test]
    fn a_gateways_dotted_key_is_split_from_its_field_at_the_last_dot() {
        let options = Answering {
            answers: vec!["weather.region.city=Lisbon".into()],
            ..Answering::default()
        };
        let presets = Presets::from_options(&options).unwrap();
        let Some(Preset::Accept(fields)) = presets.get("weather.region") else {
            panic!("answered under the whole key");
        };
        assert_eq!(fields["city"], "Lisbon");
    }

    #[test]
    fn a_malformed_answer_or_a_key_given_twice_is_a_usage_error() {
        for options in [
            Answering {
                answers: vec!["nofield=1".into()],
                ..Answering::default()
            },
            Answering {
                answers: vec!["k.f=1".into()],
                decline: vec!["k".into()],
                ..Answering::default()
            },
        ] {
            assert!(matches!(
                Presets::from_options(&options),
                Err(CliError::Usage(_))
            ));
        }
    }
}
