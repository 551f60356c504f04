//! `tern keys`: a fresh requestState secret, and the three-phase rotation of a fleet's
//! key ring (see the SDK's `tern_mcp::seal`: the first key of a ring seals, every key
//! verifies).

use base64::Engine as _;
use tern_mcp::seal::{DEFAULT_TTL, Keyring, generate_secret, generate_secret_hex, parse_secret};

use crate::cli::KeysCommand;
use crate::error::{CliError, Result};
use crate::exit;

/// Runs a `keys` command.
pub(crate) fn run(command: KeysCommand) -> Result<u8> {
    match command {
        KeysCommand::Gen { base64 } => {
            println!(
                "{}",
                if base64 {
                    let secret = generate_secret();
                    base64::engine::general_purpose::STANDARD.encode(secret)
                } else {
                    generate_secret_hex()
                }
            );
        }
        KeysCommand::RotatePlan { keys } => print!("{}", rotate_plan(&keys)?),
    }
    Ok(exit::DONE)
}

/// A secret as the user wrote it, and its bytes.
struct Secret {
    text: String,
    bytes: Vec<u8>,
}

/// Reads a secret written as hex, else as base64.
fn parse(text: &str, index: usize) -> Result<Secret> {
    let bytes = parse_secret(text).map_err(|_| {
        CliError::usage(format!(
            "key #{}: not a hex or base64 secret (make one with `tern keys gen`)",
            index + 1
        ))
    })?;
    Ok(Secret {
        text: text.to_owned(),
        bytes: bytes.to_vec(),
    })
}

/// The key id the SDK writes into each token it seals under `secret`.
fn key_id(secret: &Secret) -> Result<String> {
    let ring = Keyring::new([&secret.bytes]).map_err(|e| CliError::usage(e.to_string()))?;
    ring.key_ids()
        .next()
        .ok_or_else(|| CliError::usage("a keyring of one key has no key id"))
}

/// The plan: current keys then the new one (generated when only one key is given).
pub(crate) fn rotate_plan(keys: &[String]) -> Result<String> {
    let mut secrets = keys
        .iter()
        .enumerate()
        .map(|(i, k)| parse(k, i))
        .collect::<Result<Vec<_>>>()?;
    let generated = secrets.len() == 1;
    if generated {
        secrets.push(parse(&generate_secret_hex(), 1)?);
    }
    // The SDK's own checks: length, a key listed twice, key ids that collide.
    Keyring::new(secrets.iter().map(|s| &s.bytes)).map_err(|e| CliError::usage(e.to_string()))?;
    let Some((new, current)) = secrets.split_last() else {
        return Err(CliError::usage("rotate-plan needs at least one key"));
    };
    let mut label = Vec::new();
    for (i, secret) in current.iter().enumerate() {
        let name = if i == 0 {
            "OLD".to_owned()
        } else {
            format!("OLD{}", i + 1)
        };
        label.push((name, secret));
    }
    let new_label = ("NEW".to_owned(), new);
    let ring = |names: &[&(String, &Secret)]| {
        names
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let flags = |names: &[&(String, &Secret)]| {
        names
            .iter()
            .map(|(_, s)| format!("--state-key {}", s.text))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let old: Vec<&(String, &Secret)> = label.iter().collect();
    let phase1: Vec<_> = old.iter().copied().chain([&new_label]).collect();
    let phase2: Vec<_> = [&new_label]
        .into_iter()
        .chain(old.iter().copied())
        .collect();
    let phase3 = vec![&new_label];

    let mut out = String::new();
    out.push_str("requestState key rotation\n\nKeys:\n");
    for (name, secret) in label.iter().chain([&new_label]) {
        let what = if name == "OLD" {
            "seals now"
        } else if name == "NEW" && generated {
            "new, generated now"
        } else if name == "NEW" {
            "new"
        } else {
            "verifies now"
        };
        out.push_str(&format!(
            "  {name:<5} key id {}  ({what})  {}\n",
            key_id(secret)?,
            secret.text
        ));
    }
    out.push_str(
        "\nThe first key of a ring seals; every key in it verifies. Roll each phase out to \
         every instance\nbefore the next one starts.\n",
    );
    let ttl = DEFAULT_TTL.as_secs();
    let phases = [
        (
            "Phase 1: every instance learns to verify NEW; OLD still seals.",
            &phase1,
            String::new(),
        ),
        (
            "Phase 2: once phase 1 is on every instance, NEW seals; state in flight under OLD\n  \
             keeps verifying.",
            &phase2,
            String::new(),
        ),
        (
            "Phase 3: one requestState TTL after phase 2 is on every instance, retire the old \
             keys.",
            &phase3,
            format!(
                "\n  Wait at least the servers' ttl (default {ttl} s) after the last instance took \
                 phase 2."
            ),
        ),
    ];
    for (what, names, note) in phases {
        out.push_str(&format!(
            "\n{what}\n  RequestStateSecurity::keys([{}])\n  e.g. everything {}{note}\n",
            ring(names),
            flags(names)
        ));
    }
    out.push_str(
        "\nNever promote NEW to the first place before every instance verifies it: state it \
         seals would\nbe refused by the instances that do not know it yet.\n",
    );
    Ok(out)
}
