//! Every example message published with the 2026-07-28 schema decodes into the
//! generated type of its definition and encodes back to the same JSON.

use std::fs;

use tern_types::v2026_07_28 as v;

#[test]
fn all_2026_examples_round_trip_through_their_generated_type() {
    let dir = tern_tests::schema_dir()
        .unwrap()
        .join("2026-07-28/examples");
    let mut definitions: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    definitions.sort();
    let mut passed = 0;
    let mut failures = Vec::new();
    for def_dir in definitions {
        let def = def_dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = fs::read_dir(&def_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let name = format!("{def}/{}", file.file_name().unwrap().to_string_lossy());
            let original: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
            match v::__roundtrip(&def, original.clone()) {
                None => failures.push(format!("{name}: no generated type for {def}")),
                Some(Err(e)) => failures.push(format!("{name}: does not decode: {e}")),
                Some(Ok(back)) if back != original => failures.push(format!(
                    "{name}: encodes differently:\n  original: {original}\n  encoded:  {back}"
                )),
                Some(Ok(_)) => passed += 1,
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        passed + failures.len(),
        failures.join("\n")
    );
    assert_eq!(passed, 129, "the pinned schema publishes 129 examples");
}
