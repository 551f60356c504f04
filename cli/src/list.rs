//! `tern tools|prompts|resources|templates`: every page, as a table or JSON.

use serde::Serialize;
use serde_json::Value;
use tern_mcp::client::Client;
use tern_mcp::types::v2026_07_28::method::{
    ListPrompts, ListResourceTemplates, ListResources, ListTools,
};

use crate::error::{CliError, Result};
use crate::render::pretty;
use crate::safe;

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum What {
    Tools,
    Prompts,
    Resources,
    Templates,
}

/// Lists `what`, printed to stdout.
pub(crate) async fn list(client: &Client, what: What, json: bool) -> Result<()> {
    let items = match what {
        What::Tools => values(client.list_all::<ListTools>().await?)?,
        What::Prompts => values(client.list_all::<ListPrompts>().await?)?,
        What::Resources => values(client.list_all::<ListResources>().await?)?,
        What::Templates => values(client.list_all::<ListResourceTemplates>().await?)?,
    };
    if json {
        println!("{}", safe::json(&pretty(&Value::Array(items))));
        return Ok(());
    }
    if items.is_empty() {
        println!("(none)");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = items.iter().map(|item| row(what, item)).collect();
    print!("{}", table(header(what), &rows));
    Ok(())
}

fn values<T: Serialize>(items: Vec<T>) -> Result<Vec<Value>> {
    items
        .into_iter()
        .map(|i| serde_json::to_value(i).map_err(|e| CliError::Prompt(e.to_string())))
        .collect()
}

fn header(what: What) -> &'static [&'static str] {
    match what {
        What::Tools => &["NAME", "DESCRIPTION"],
        What::Prompts => &["NAME", "ARGUMENTS", "DESCRIPTION"],
        What::Resources => &["URI", "NAME", "MIME TYPE"],
        What::Templates => &["URI TEMPLATE", "NAME", "MIME TYPE"],
    }
}

fn row(what: What, item: &Value) -> Vec<String> {
    // Each cell on one line of its own: a server's line break or escape would break the
    // table or reach the terminal.
    let s = |key: &str| safe::line(item[key].as_str().unwrap_or_default()).into_owned();
    let description = || first_line(item["description"].as_str().unwrap_or_default());
    match what {
        What::Tools => vec![s("name"), description()],
        What::Prompts => {
            let arguments: Vec<String> = item["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    let name = safe::line(a["name"].as_str().unwrap_or_default());
                    if a["required"].as_bool() == Some(true) {
                        format!("{name}*")
                    } else {
                        name.into_owned()
                    }
                })
                .collect();
            vec![s("name"), arguments.join(", "), description()]
        }
        What::Resources => vec![s("uri"), s("name"), s("mimeType")],
        What::Templates => vec![s("uriTemplate"), s("name"), s("mimeType")],
    }
}

fn first_line(text: &str) -> String {
    safe::line(text.lines().next().unwrap_or_default()).into_owned()
}

/// Columns padded to their widest cell; the last column is not padded.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<width$}  "));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}
