//! The guide held to its checklist: every chapter in the index, in order, with the title
//! the checklist gives it; every section of the seed covered by a chapter that exists.
//! The pages themselves are declared once, by `chapters!` in `mod.rs`.

use super::PAGES;

const CHECKLIST: &str = include_str!("checklist.txt");
const INDEX: &str = include_str!("mod.rs");

/// The `kind:` lines of the checklist, split on `|` and trimmed.
fn entries(kind: &str) -> Vec<Vec<&'static str>> {
    CHECKLIST
        .lines()
        .filter_map(|line| line.strip_prefix(kind))
        .map(|rest| rest.split('|').map(str::trim).collect())
        .collect()
}

fn page(module: &str) -> Option<&'static str> {
    PAGES.iter().find(|(m, _)| *m == module).map(|(_, p)| *p)
}

fn title(page: &str) -> Option<&str> {
    page.lines().next()?.strip_prefix("# ")
}

#[test]
fn the_chapters_are_the_checklists_in_its_order_with_its_titles() {
    let listed: Vec<(&str, &str)> = entries("chapter:").iter().map(|e| (e[0], e[1])).collect();
    let found: Vec<(&str, &str)> = PAGES
        .iter()
        .map(|(module, page)| (*module, title(page).unwrap_or("(no `# ` title)")))
        .collect();
    assert_eq!(found, listed, "guide pages against checklist.txt");
}

#[test]
fn the_index_names_every_chapter_in_order() {
    let mut from = 0;
    for (number, (module, _)) in PAGES.iter().enumerate() {
        let item = format!("//! {number}. [`{module}`]:");
        let at = INDEX[from..].find(&item);
        assert!(at.is_some(), "the index lacks `{item}`");
        from += at.unwrap_or_default();
    }
}

#[test]
fn every_section_of_the_seed_is_covered_by_a_chapter() {
    let sections = entries("seed:");
    assert_eq!(sections.len(), 13, "the seed has thirteen sections");
    for entry in &sections {
        let (section, module) = (entry[0], entry.get(1).copied().unwrap_or(""));
        let page = page(module);
        assert!(
            page.is_some(),
            "seed section `{section}`: no chapter `{module}`"
        );
        if let (Some(page), Some(passage)) = (page, entry.get(2)) {
            assert!(
                page.contains(passage),
                "`{module}` lacks `{passage}`, for `{section}`"
            );
        }
    }
}

#[test]
fn every_code_block_of_the_guide_is_a_doctest_that_runs() {
    for (module, page) in PAGES {
        for fence in page.lines().filter(|l| l.starts_with("```")) {
            let info = fence.trim_start_matches('`');
            assert!(
                info.is_empty() || info == "compile_fail,E0277",
                "`{module}` has a block marked `{info}`: every block runs (or, once, must not compile)"
            );
        }
    }
}
