//! A form's fields, read from an elicitation's `requestedSchema`, and an answer checked
//! against each: the same rules for text typed on the terminal, `--answer` values and
//! JSON from `--answers`.

use serde_json::{Map, Value};
use tern_mcp::types::v2026_07_28::ElicitValue;

/// One property of a form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The property's name: the key of its answer.
    pub(crate) name: String,
    /// Its `title`, else its name.
    pub(crate) label: String,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) default: Option<Value>,
    pub(crate) kind: Kind,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Text {
        format: Option<String>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// One of the choices.
    Choice(Vec<Choice>),
    /// Any of the choices.
    Multi {
        choices: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// A choice of an enum field: the value sent, the title shown.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) title: Option<String>,
}

impl Choice {
    /// What the user sees.
    pub(crate) fn shown(&self) -> String {
        match &self.title {
            Some(title) if title != &self.value => format!("{title} ({})", self.value),
            _ => self.value.clone(),
        }
    }
}

/// The fields of `schema` (an object schema of primitive properties), in its order.
pub(crate) fn fields(schema: &Value) -> Result<Vec<Field>, String> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .map(|(name, property)| {
            Ok(Field {
                name: name.clone(),
                label: text(property, "title").unwrap_or_else(|| name.clone()),
                description: text(property, "description"),
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
                kind: kind(name, property)?,
            })
        })
        .collect()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn kind(name: &str, property: &Value) -> Result<Kind, String> {
    let number = |key| property.get(key).and_then(Value::as_f64);
    let count = |key| property.get(key).and_then(Value::as_u64);
    match property.get("type").and_then(Value::as_str) {
        Some("string") => Ok(match choices(property) {
            Some(choices) => Kind::Choice(choices),
            None => Kind::Text {
                format: text(property, "format"),
                min_length: count("minLength"),
                max_length: count("maxLength"),
            },
        }),
        Some(t @ ("number" | "integer")) => Ok(Kind::Number {
            integer: t == "integer",
            minimum: number("minimum"),
            maximum: number("maximum"),
        }),
        Some("boolean") => Ok(Kind::Boolean),
        Some("array") => {
            let items = property.get("items").unwrap_or(&Value::Null);
            let choices = choices(items)
                .ok_or_else(|| format!("field `{name}`: an array field needs enum items"))?;
            Ok(Kind::Multi {
                choices,
                min_items: count("minItems"),
                max_items: count("maxItems"),
            })
        }
        other => Err(format!(
            "field `{name}` has a type this client cannot ask for: {}",
            other.unwrap_or("none")
        )),
    }
}

/// The choices of an enum schema: `enum` (titles from the legacy `enumNames`), or
/// `oneOf`/`anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    Some(Choice {
                        value: v.as_str()?.to_owned(),
                        title: names
                            .and_then(|n| n.get(i))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    })
                })
                .collect(),
        );
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                Some(Choice {
                    value: o.get("const")?.as_str()?.to_owned(),
                    title: text(o, "title"),
                })
            })
            .collect(),
    )
}

impl Field {
    /// Reads `input` (typed, or given with `--answer`) as this field's value.
    pub(crate) fn parse(&self, input: &str) -> Result<ElicitValue, String> {
        let input = input.trim();
        match &self.kind {
            Kind::Text { .. } => self.check_text(input),
            Kind::Number { integer, .. } => {
                let n: f64 = input
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| format!("`{input}` is not a number"))?;
                self.check_number(n, *integer)
            }
            Kind::Boolean => match input.to_ascii_lowercase().as_str() {
                "true" | "yes" | "y" | "1" => Ok(ElicitValue::Boolean(true)),
                "false" | "no" | "n" | "0" => Ok(ElicitValue::Boolean(false)),
                _ => Err(format!("`{input}` is not yes or no (true/false)")),
            },
            Kind::Choice(choices) => pick(choices, input).map(ElicitValue::String),
            Kind::Multi { choices, .. } => {
                let picked = input
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| pick(choices, s))
                    .collect::<Result<Vec<_>, _>>()?;
                self.check_items(picked)
            }
        }
    }

    /// Reads a JSON value (from `--answers`, or a schema `default`) as this field's.
    pub(crate) fn read_json(&self, value: &Value) -> Result<ElicitValue, String> {
        match (value, &self.kind) {
            (Value::String(s), _) => self.parse(s),
            (Value::Number(n), Kind::Number { integer, .. }) => {
                self.check_number(n.as_f64().unwrap_or(f64::NAN), *integer)
            }
            (Value::Bool(b), Kind::Boolean) => Ok(ElicitValue::Boolean(*b)),
            (Value::Array(items), Kind::Multi { choices, .. }) => {
                let picked = items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .ok_or_else(|| format!("{v} is not one of the choices"))
                            .and_then(|s| pick(choices, s))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                self.check_items(picked)
            }
            (other, _) => Err(format!("{other} is not a value for this field")),
        }
    }

    /// The field's default as its value, when it has a valid one.
    pub(crate) fn default_value(&self) -> Option<ElicitValue> {
        self.read_json(self.default.as_ref()?).ok()
    }

    fn check_text(&self, input: &str) -> Result<ElicitValue, String> {
        let Kind::Text {
            format,
            min_length,
            max_length,
        } = &self.kind
        else {
            return Err("not a text field".into());
        };
        let len = input.chars().count() as u64;
        if let Some(min) = min_length.filter(|m| len < *m) {
            return Err(format!("at least {min} characters"));
        }
        if let Some(max) = max_length.filter(|m| len > *m) {
            return Err(format!("at most {max} characters"));
        }
        if let Some(format) = format {
            check_format(format, input)?;
        }
        Ok(ElicitValue::String(input.to_owned()))
    }

    fn check_number(&self, n: f64, integer: bool) -> Result<ElicitValue, String> {
        let Kind::Number {
            minimum, maximum, ..
        } = &self.kind
        else {
            return Err("not a number field".into());
        };
        if integer && n.fract() != 0.0 {
            return Err(format!("{n} is not a whole number"));
        }
        if let Some(min) = minimum.filter(|m| n < *m) {
            return Err(format!("{n} is below the minimum {min}"));
        }
        if let Some(max) = maximum.filter(|m| n > *m) {
            return Err(format!("{n} is above the maximum {max}"));
        }
        // A whole number fits i64 here: it is finite and was checked for a fraction.
        Ok(if integer && n.abs() < 9.0e15 {
            ElicitValue::Integer(n as i64)
        } else {
            ElicitValue::Number(n)
        })
    }

    fn check_items(&self, picked: Vec<String>) -> Result<ElicitValue, String> {
        if let Kind::Multi {
            min_items,
            max_items,
            ..
        } = &self.kind
        {
            let n = picked.len() as u64;
            if let Some(min) = min_items.filter(|m| n < *m) {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = max_items.filter(|m| n > *m) {
                return Err(format!("choose at most {max}"));
            }
        }
        Ok(ElicitValue::List(picked))
    }

    /// A short note of what the field takes, for a prompt: `integer 1..10`, `email`.
    pub(crate) fn hint(&self) -> Option<String> {
        match &self.kind {
            Kind::Text { format, .. } => format.clone(),
            Kind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let what = if *integer { "integer" } else { "number" };
                Some(match (minimum, maximum) {
                    (Some(a), Some(b)) => format!("{what} {a}..{b}"),
                    (Some(a), None) => format!("{what} >= {a}"),
                    (None, Some(b)) => format!("{what} <= {b}"),
                    (None, None) => what.to_owned(),
                })
            }
            Kind::Multi { .. } => Some("comma-separated".into()),
            Kind::Boolean | Kind::Choice(_) => None,
        }
    }
}

/// The value of the choice `input` names (by value, or by title ignoring case).
fn pick(choices: &[Choice], input: &str) -> Result<String, String> {
    choices
        .iter()
        .find(|c| c.value == input)
        .or_else(|| {
            choices.iter().find(|c| {
                c.title
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case(input))
            })
        })
        .map(|c| c.value.clone())
        .ok_or_else(|| {
            let values: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
            format!("`{input}` is not one of: {}", values.join(", "))
        })
}

/// The string formats of elicitation schemas, checked loosely: enough to catch a typo.
fn check_format(format: &str, input: &str) -> Result<(), String> {
    let ok = match format {
        "email" => input.split_once('@').is_some_and(|(user, domain)| {
            !user.is_empty() && domain.contains('.') && !domain.starts_with('.')
        }),
        "uri" => input
            .split_once(':')
            .is_some_and(|(scheme, rest)| is_scheme(scheme) && !rest.is_empty()),
        "date" => is_date(input),
        "date-time" => input
            .split_once(['T', 't'])
            .is_some_and(|(date, time)| is_date(date) && time.len() >= 8),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("`{input}` is not a valid {format}"))
    }
}

fn is_scheme(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    matches!(parts.as_slice(), [y, m, d]
        if y.len() == 4 && m.len() == 2 && d.len() == 2
            && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit())))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(property: Value) -> Field {
        let schema = json!({"type": "object", "properties": {"f": property}, "required": ["f"]});
        fields(&schema).unwrap().remove(0)
    }

    #[test]
    fn numbers_are_held_to_their_bounds() {
        let f = one(json!({"type": "integer", "minimum": 1, "maximum": 10}));
        assert_eq!(f.parse("7"), Ok(ElicitValue::Integer(7)));
        assert!(f.parse("11").unwrap_err().contains("maximum"));
        assert!(f.parse("2.5").unwrap_err().contains("whole"));
        assert!(f.parse("x").is_err());
    }

    #[test]
    fn enums_take_values_or_titles_in_every_form() {
        let titled = one(json!({"type": "string", "oneOf": [{"const": "v1", "title": "First"}]}));
        assert_eq!(titled.parse("first"), Ok(ElicitValue::String("v1".into())));
        let legacy = one(json!({"type": "string", "enum": ["a"], "enumNames": ["Alpha"]}));
        assert_eq!(legacy.parse("a"), Ok(ElicitValue::String("a".into())));
        let multi = one(json!({"type": "array", "items": {"anyOf": [
            {"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]}}));
        assert_eq!(
            multi.parse("x, Why"),
            Ok(ElicitValue::List(vec!["x".into(), "y".into()]))
        );
        assert!(multi.parse("z").is_err());
    }

    #[test]
    fn formats_are_checked() {
        let email = one(json!({"type": "string", "format": "email"}));
        assert!(email.parse("a@b.c").is_ok());
        assert!(email.parse("nope").is_err());
        let date = one(json!({"type": "string", "format": "date"}));
        assert!(date.parse("2026-07-28").is_ok());
        assert!(date.parse("28/07/2026").is_err());
    }

    #[test]
    fn an_unaskable_type_is_an_error_not_a_panic() {
        let schema = json!({"properties": {"f": {"type": "object"}}});
        assert!(fields(&schema).unwrap_err().contains("`f`"));
    }
}
