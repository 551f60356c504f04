//! `cargo run -p tern-codegen [-- --check | --methods]`: regenerates `generated/src/**`
//! from the fetched schemas, checks that the committed copy is current, or prints each
//! version's method table.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut schema = root.join("schema");
    let mut out = root.join("generated");
    let mut check = false;
    let mut methods = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--methods" => methods = true,
            "--schema" => schema = args.next().map(PathBuf::from).unwrap_or(schema),
            "--out" => out = args.next().map(PathBuf::from).unwrap_or(out),
            other => {
                eprintln!(
                    "usage: tern-codegen [--check] [--schema DIR] [--out DIR] (unknown argument {other})"
                );
                return ExitCode::from(2);
            }
        }
    }
    if methods {
        for v in tern_codegen::VERSIONS {
            let table = tern_codegen::read_schema(&schema.join(v.name).join("schema.json"))
                .and_then(|s| tern_codegen::method_table(v.name, &s));
            match table {
                Ok(t) => println!("{t}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        for ext in tern_codegen::EXTENSIONS {
            let table = (|| {
                let base =
                    tern_codegen::read_schema(&schema.join(ext.base.name).join("schema.json"))?;
                let own = ext.schema.read(&schema)?;
                let core = tern_codegen::generate_version(ext.base.name, &base)?;
                let out = tern_codegen::generate_extension(ext, &base, &core.source, &own)?;
                Ok::<_, tern_codegen::Error>(tern_codegen::render_methods(ext.id, &out.methods))
            })();
            match table {
                Ok(t) => println!("{t}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    let files = match tern_codegen::generate(&schema) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = if check {
        tern_codegen::stale(&files, &out).map(|stale| {
            for path in &stale {
                eprintln!("stale: {}", path.display());
            }
            if !stale.is_empty() {
                eprintln!("run `{}` to regenerate", tern_codegen::REGENERATE);
            }
            stale.is_empty()
        })
    } else {
        tern_codegen::write(&files, &out).map(|()| true)
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
