//! Runs typify on the prepared definitions: it makes the leaf structs.

use proc_macro2::TokenStream;

use crate::prepare;
use crate::{Error, Result};

pub(crate) fn run_typify(p: &prepare::Prepared) -> Result<TokenStream> {
    use typify::{TypeSpace, TypeSpaceSettings};

    let mut settings = TypeSpaceSettings::default();
    settings
        .with_struct_builder(false)
        .with_derive("PartialEq".to_owned())
        .with_map_type("::std::collections::BTreeMap");
    for (def, ty) in &p.replacements {
        settings.with_replacement(def, ty, std::iter::empty());
    }
    let defs: Vec<(String, schemars08::schema::Schema)> = p
        .defs
        .iter()
        .map(|(k, v)| {
            serde_json::from_value(v.clone())
                .map(|s| (k.clone(), s))
                .map_err(|e| Error::Schema {
                    version: p.version.clone(),
                    definition: k.clone(),
                    message: format!("not a JSON schema typify reads: {e}"),
                })
        })
        .collect::<Result<_>>()?;

    let attempt = |defs: Vec<(String, schemars08::schema::Schema)>| {
        let settings = settings.clone();
        std::panic::catch_unwind(move || {
            let mut space = TypeSpace::new(&settings);
            space
                .add_ref_types(defs)
                .map(|()| space.to_stream())
                .map_err(|e| e.to_string())
        })
    };
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = attempt(defs.clone());
    let result = match outcome {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(message)) => Err(Error::Schema {
            version: p.version.clone(),
            definition: "(typify)".into(),
            message,
        }),
        Err(panic) => {
            // Find the definition typify cannot take: try each alone, the others
            // replaced by an empty schema so references still resolve.
            let culprit = defs
                .iter()
                .map(|(name, _)| name.clone())
                .find(|name| {
                    let isolated = defs
                        .iter()
                        .map(|(k, s)| {
                            if k == name {
                                (k.clone(), s.clone())
                            } else {
                                (k.clone(), schemars08::schema::Schema::Bool(true))
                            }
                        })
                        .collect();
                    attempt(isolated).is_err()
                })
                .unwrap_or_else(|| "(unknown)".into());
            Err(Error::Schema {
                version: p.version.clone(),
                definition: culprit,
                message: format!("typify panicked: {}", panic_message(&panic)),
            })
        }
    };
    std::panic::set_hook(quiet);
    let stream = result?;
    Ok(stream)
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "no message".into())
}
