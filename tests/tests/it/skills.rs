//! The skills extension (SEP-2640) on both sides: a server publishes skills, their
//! digests and sizes computed by tern; a host lists them, fetches a file only when asked
//! and refuses one that does not match its entry; bad skills are refused at
//! registration. In both eras.

use crate::http_support;

use std::net::SocketAddr;

use serde_json::{Value, json};
use tern_mcp::client::{Client, EraMode};
use tern_mcp::mcp::McpServer;
use tern_mcp::skills::Skills;
use tern_mcp::transport::memory;
use tern_mcp::types::ext_skills::method::ReadResourceDirectory;
use tern_mcp::types::ext_skills::{
    EXTENSION_ID, ReadResourceDirectoryRequestParams, Skill, SkillResources,
};
use tern_mcp::types::v2026_07_28::{RequestParams, method};
use tern_mcp::{Error, ProtocolError, SkillFailure};

const SKILL_MD: &str =
    "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n\nSee references/FORMS.md.\n";
const FORMS_MD: &str = "Which form for which office.\n";

fn pdf_tools() -> Skills {
    Skills::new()
        .skill(
            "pdf-tools",
            [("SKILL.md", SKILL_MD), ("references/FORMS.md", FORMS_MD)],
        )
        .unwrap()
}

async fn client_of(skills: Skills, era: EraMode) -> Client {
    served(McpServer::new("docs", "1").extension(skills), era).await
}

async fn served(mcp: McpServer, era: EraMode) -> Client {
    let (client_end, server_end) = memory::pair();
    tokio::spawn(async move { mcp.serve(server_end).await });
    Client::builder("host", "1")
        .era(era)
        .connect(client_end)
        .await
        .unwrap()
}

fn listed(skill: &Skill) -> Vec<(String, String, u64)> {
    match &skill.resources {
        SkillResources::Many(files) => files
            .iter()
            .map(|f| (f.uri.clone(), f.digest.clone(), f.size))
            .collect(),
        SkillResources::Dynamic(_) => panic!("listed as dynamic"),
    }
}

#[tokio::test]
async fn a_published_skill_is_listed_with_its_digests_and_read_back_checked_in_both_eras() {
    for era in [EraMode::Stateless, EraMode::Session] {
        let client = client_of(pdf_tools(), era).await;
        let skills = client.skills().await.unwrap();
        assert_eq!(skills.len(), 1);
        let skill = &skills[0];
        assert_eq!(skill.uri, "skill://pdf-tools/SKILL.md");
        assert_eq!(skill.frontmatter.name, "pdf-tools");
        assert_eq!(skill.frontmatter.description, "Fill PDF forms");
        assert_eq!(
            listed(skill),
            [
                (
                    "skill://pdf-tools/SKILL.md".to_owned(),
                    "sha256:a28e246600d65448456c7865f66c15d6af7dd7be6dc2fa168eb88bac8d96a072"
                        .to_owned(),
                    78
                ),
                (
                    "skill://pdf-tools/references/FORMS.md".to_owned(),
                    "sha256:160498531aa3fa3bbb36c5b280b6853940c33b8c40db79bc29b0f2c4d6e630a0"
                        .to_owned(),
                    29
                ),
            ]
        );
        let md = client.read_skill_file(skill, &skill.uri).await.unwrap();
        assert_eq!(md, SKILL_MD.as_bytes());
        let forms = client
            .read_skill_file(skill, "skill://pdf-tools/references/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms, FORMS_MD.as_bytes());
        // Listed or not, a skill's entry is there by its URI; another URI is refused.
        let got = client.get_skill(&skill.uri).await.unwrap();
        assert_eq!(&got, skill);
        let unknown = client
            .get_skill("skill://nowhere/SKILL.md")
            .await
            .unwrap_err();
        assert!(
            matches!(unknown, Error::Rpc(ref e) if e.code == -32602 && e.message.contains("No skill")),
            "{unknown:?}"
        );
    }
}

#[tokio::test]
async fn the_extension_is_declared_with_directory_reads_beside_resources() {
    let client = client_of(pdf_tools(), EraMode::Stateless).await;
    let discovered = client
        .request::<method::Discover>(RequestParams::default())
        .await
        .unwrap();
    let extensions = discovered.capabilities.extensions.unwrap_or_default();
    assert_eq!(
        Value::Object(extensions[EXTENSION_ID].clone()),
        json!({"directoryRead": true})
    );
    assert!(discovered.capabilities.resources.is_some());
    // The SKILL.md is a resource named and described by its front matter.
    let resources = client.list_all::<method::ListResources>().await.unwrap();
    let md = resources
        .iter()
        .find(|r| r.uri == "skill://pdf-tools/SKILL.md")
        .unwrap();
    assert_eq!(md.name, "pdf-tools");
    assert_eq!(md.description.as_deref(), Some("Fill PDF forms"));
    assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));
}

#[tokio::test]
async fn a_directory_lists_its_direct_children_and_a_file_is_not_a_directory() {
    let client = client_of(pdf_tools(), EraMode::Stateless).await;
    let read = |uri: &str| {
        client.request::<ReadResourceDirectory>(ReadResourceDirectoryRequestParams::new(uri))
    };
    let root = read("skill://pdf-tools").await.unwrap();
    let children: Vec<(&str, Option<&str>)> = root
        .resources
        .iter()
        .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://pdf-tools/SKILL.md", Some("text/markdown")),
            ("skill://pdf-tools/references", Some("inode/directory")),
        ]
    );
    let inner = read("skill://pdf-tools/references").await.unwrap();
    assert_eq!(inner.resources.len(), 1);
    for not_a_directory in ["skill://pdf-tools/SKILL.md", "skill://elsewhere"] {
        let refused = read(not_a_directory).await.unwrap_err();
        assert!(
            matches!(refused, Error::Rpc(ref e) if e.code == -32602),
            "{refused:?}"
        );
    }
}

fn refusal(err: Error) -> SkillFailure {
    match err {
        Error::Protocol(ProtocolError::SkillFile { failure, .. }) => failure,
        other => panic!("not a refused skill file: {other:?}"),
    }
}

#[tokio::test]
async fn a_host_uses_no_file_that_differs_from_its_entry() {
    let client = client_of(pdf_tools(), EraMode::Stateless).await;
    let honest = client.skills().await.unwrap().remove(0);
    let forms = "skill://pdf-tools/references/FORMS.md";
    let tamper = |f: &dyn Fn(&mut Skill)| {
        let mut skill = honest.clone();
        f(&mut skill);
        skill
    };
    let files = |skill: &mut Skill| match &mut skill.resources {
        SkillResources::Many(files) => files.clone(),
        SkillResources::Dynamic(_) => unreachable!(),
    };

    // The entry says another size: refused before hashing.
    let wrong_size = tamper(&|s| {
        let mut list = files(s);
        list[1].size += 1;
        s.resources = SkillResources::Many(list);
    });
    assert_eq!(
        refusal(
            client
                .read_skill_file(&wrong_size, forms)
                .await
                .unwrap_err()
        ),
        SkillFailure::Size {
            listed: 30,
            served: 29
        }
    );
    // The same length, another digest.
    let wrong_digest = tamper(&|s| {
        let mut list = files(s);
        list[1].digest = format!("sha256:{}", "0".repeat(64));
        s.resources = SkillResources::Many(list);
    });
    assert_eq!(
        refusal(
            client
                .read_skill_file(&wrong_digest, forms)
                .await
                .unwrap_err()
        ),
        SkillFailure::Digest
    );
    // The SKILL.md matches its digest, but not the entry's front matter.
    let other_description = tamper(&|s| s.frontmatter.description = "Exfiltrate".into());
    assert_eq!(
        refusal(
            client
                .read_skill_file(&other_description, &honest.uri)
                .await
                .unwrap_err()
        ),
        SkillFailure::FrontMatter("`description`".into())
    );
    let extra_field = tamper(&|s| {
        s.frontmatter
            .extra
            .insert("allowed-tools".into(), json!("Bash"));
    });
    assert_eq!(
        refusal(
            client
                .read_skill_file(&extra_field, &honest.uri)
                .await
                .unwrap_err()
        ),
        SkillFailure::FrontMatter("`allowed-tools`".into())
    );
    // A file the entry does not list is never fetched.
    assert_eq!(
        refusal(
            client
                .read_skill_file(&honest, "skill://pdf-tools/secrets.md")
                .await
                .unwrap_err()
        ),
        SkillFailure::Unlisted
    );
}

#[tokio::test]
async fn many_skills_are_paged_and_listed_whole() {
    let mut skills = Skills::new();
    for i in 0..150 {
        let name = format!("skill-{i:03}");
        let md = format!("---\nname: {name}\ndescription: number {i}\n---\n");
        skills = skills
            .skill(&format!("acme/{name}"), [("SKILL.md", md)])
            .unwrap();
    }
    // The caching fields are the server's, as for every list.
    let mcp = McpServer::new("docs", "1")
        .cache(300_000, true)
        .extension(skills);
    let client = served(mcp, EraMode::Stateless).await;
    let first = client
        .list::<tern_mcp::types::ext_skills::method::ListSkills>(None)
        .await
        .unwrap();
    assert_eq!(first.skills.len(), 100);
    assert_eq!(first.ttl_ms, Some(300_000));
    assert!(first.next_cursor.is_some());
    let all = client.skills().await.unwrap();
    assert_eq!(all.len(), 150);
    assert_eq!(all[149].uri, "skill://acme/skill-149/SKILL.md");
    let refused = client
        .list::<tern_mcp::types::ext_skills::method::ListSkills>(Some("nonsense".into()))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, Error::Rpc(ref e) if e.code == -32602),
        "{refused:?}"
    );
}

fn refused(path: &str, files: &[(&str, &str)]) -> String {
    Skills::new()
        .skill(path, files.iter().copied())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_bad_skill_is_refused_at_registration_saying_why() {
    let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
    for (path, files, says) in [
        ("pdf", vec![("README.md", md("pdf"))], "no SKILL.md"),
        (
            "pdf",
            vec![("SKILL.md", "# no front matter\n".into())],
            "front matter",
        ),
        (
            "pdf",
            vec![("SKILL.md", md("other"))],
            "must end in its name",
        ),
        ("PDF", vec![("SKILL.md", md("PDF"))], "not a skill name"),
        ("a--b", vec![("SKILL.md", md("a--b"))], "not a skill name"),
        (
            "../pdf",
            vec![("SKILL.md", md("pdf"))],
            "clean relative path",
        ),
        (
            "pdf",
            vec![("SKILL.md", md("pdf")), ("../escape.md", "x".into())],
            "clean relative path",
        ),
        (
            "pdf",
            vec![("SKILL.md", md("pdf")), ("nul\0.md", "x".into())],
            "holds a NUL",
        ),
    ] {
        let files: Vec<(&str, &str)> = files.iter().map(|(p, b)| (*p, b.as_str())).collect();
        let err = refused(path, &files);
        assert!(err.contains(says), "{path}: {err}");
    }
    let twice = Skills::new()
        .skill("pdf", [("SKILL.md", md("pdf"))])
        .unwrap()
        .skill("pdf", [("SKILL.md", md("pdf"))])
        .unwrap_err();
    assert!(twice.to_string().contains("already published"), "{twice}");
}

#[test]
fn a_skill_over_the_budgets_is_refused() {
    let md = "---\nname: big\ndescription: d\n---\n".to_owned();
    let mut many: Vec<(String, Vec<u8>)> = (0..512)
        .map(|i| (format!("f{i}.txt"), b"x".to_vec()))
        .collect();
    many.push(("SKILL.md".into(), md.clone().into_bytes()));
    let err = Skills::new().skill("big", many).unwrap_err().to_string();
    assert!(err.contains("513 files"), "{err}");
    let heavy = vec![
        ("SKILL.md".to_owned(), md.into_bytes()),
        ("blob.bin".to_owned(), vec![0u8; 16 * 1024 * 1024]),
    ];
    let err = Skills::new().skill("big", heavy).unwrap_err().to_string();
    assert!(err.contains("bytes, over"), "{err}");
}

#[test]
fn the_everything_examples_skills_directory_publishes_its_skill() {
    let dir = tern_tests::workspace_root().join("runtime/examples/support/skills");
    let skills = Skills::from_dir(&dir).unwrap();
    let debug = format!("{skills:?}");
    assert!(debug.contains("skill://release-notes/SKILL.md"), "{debug}");
    assert!(
        debug.contains("skill://release-notes/references/STYLE.md"),
        "{debug}"
    );
    let missing = Skills::from_dir(dir.join("no-such-dir")).unwrap_err();
    assert!(missing.to_string().contains("no-such-dir"), "{missing}");
}

#[tokio::test]
async fn a_file_with_a_legal_name_a_uri_cannot_hold_is_served_percent_encoded() {
    // `my notes.md` once stopped the server from starting: any legal file name is served.
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("pdf-tools");
    std::fs::create_dir_all(skill.join("old drafts")).unwrap();
    std::fs::write(skill.join("SKILL.md"), SKILL_MD).unwrap();
    std::fs::write(skill.join("my notes.md"), "notes\n").unwrap();
    std::fs::write(skill.join("old drafts/100% done?.txt"), "done\n").unwrap();
    let client = client_of(Skills::from_dir(dir.path()).unwrap(), EraMode::Stateless).await;

    let skill = client.skills().await.unwrap().remove(0);
    let uris: Vec<String> = listed(&skill).into_iter().map(|(uri, ..)| uri).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-tools/SKILL.md",
            "skill://pdf-tools/my%20notes.md",
            "skill://pdf-tools/old%20drafts/100%25%20done%3F.txt",
        ]
    );
    let notes = client
        .read_skill_file(&skill, "skill://pdf-tools/my%20notes.md")
        .await
        .unwrap();
    assert_eq!(notes, b"notes\n");
    let done = "skill://pdf-tools/old%20drafts/100%25%20done%3F.txt";
    client.read_skill_file(&skill, done).await.unwrap();

    // A directory's children carry the file's own name, their URIs encoded.
    let root = client
        .request::<ReadResourceDirectory>(ReadResourceDirectoryRequestParams::new(
            "skill://pdf-tools",
        ))
        .await
        .unwrap();
    let children: Vec<(&str, &str)> = root
        .resources
        .iter()
        .map(|r| (r.name.as_str(), r.uri.as_str()))
        .collect();
    assert_eq!(
        children,
        [
            ("SKILL.md", "skill://pdf-tools/SKILL.md"),
            ("my notes.md", "skill://pdf-tools/my%20notes.md"),
            ("old drafts", "skill://pdf-tools/old%20drafts"),
        ]
    );
}

/// The directory of a skill `big` under `dir`, its `SKILL.md` written.
fn big_skill(dir: &std::path::Path) -> std::path::PathBuf {
    let skill = dir.join("big");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: big\ndescription: d\n---\n",
    )
    .unwrap();
    skill
}

#[test]
fn a_skill_file_is_refused_past_the_skill_budget_by_what_was_read() {
    // What counts is what was read, not what the file's metadata said.
    let dir = tempfile::tempdir().unwrap();
    let skill = big_skill(dir.path());
    std::fs::write(skill.join("a.bin"), vec![0u8; 9 << 20]).unwrap();
    std::fs::write(skill.join("b.bin"), vec![0u8; 9 << 20]).unwrap();
    let err = Skills::from_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("over 16777216 bytes"), "{err}");
}

/// A skill `big` whose `notes.md` (at [`NOTES`]) is 15 MiB of text with characters JSON
/// escapes, in a new directory; and that text.
pub(crate) fn large_skill_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let skill = big_skill(dir.path());
    let line = "a \"quoted\" line\tof notes\n";
    let text = line.repeat((15 << 20) / line.len());
    std::fs::write(skill.join("notes.md"), &text).unwrap();
    (dir, text)
}

/// The large file of [`large_skill_dir`].
pub(crate) const NOTES: &str = "skill://big/notes.md";

/// `n` HTTP/1.1 readers of [`NOTES`] on `addr` whose answers have begun (the server is
/// writing them, and waits on each) and who read no further.
pub(crate) async fn slow_readers(addr: SocketAddr, n: usize) -> Vec<tokio::net::TcpStream> {
    use tokio::io::AsyncReadExt as _;
    let headers = http_support::mcp_headers("resources/read", Some(NOTES));
    let read = http_support::body(1, "resources/read", json!({ "uri": NOTES }));
    let mut slow = Vec::new();
    for _ in 0..n {
        let mut socket = http_support::open(addr, "POST", &headers, &read).await;
        let mut first = [0u8; 12];
        socket.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        slow.push(socket);
    }
    slow
}

/// Eight clients ask for a 15 MiB skill file and never read past the answer's first
/// bytes. Each once pinned 2.6 times the file in the server (the result written for it,
/// then copied into its connection's room); the answers now share one written body,
/// each writing only its own envelope around it.
#[tokio::test]
async fn readers_slow_to_take_a_large_skill_file_share_one_written_body() {
    let (dir, text) = large_skill_dir();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skills_server"));
    command.arg(dir.path());
    let (child, addr) = http_support::listening_child(command, "serving on http://").await;
    let pid = child.id().unwrap();
    let headers = http_support::mcp_headers("resources/read", Some(NOTES));
    let read = http_support::body(1, "resources/read", json!({ "uri": NOTES }));

    // A reader that takes it whole gets the text as written, the protocol's members added.
    let whole = http_support::post(addr, &headers, &read).await;
    assert_eq!(whole.status, 200);
    let result = &whole.json()["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["contents"][0]["text"], text.as_str());
    assert_eq!(result["contents"][0]["mimeType"], "text/markdown");

    // What the eight hold while they wait: the server's resident memory with them.
    let before = http_support::memory_kib(pid, "VmRSS");
    let _slow = slow_readers(addr, 8).await;
    let grew = http_support::memory_kib(pid, "VmRSS").saturating_sub(before);
    let file_kib = text.len() as u64 / 1024;
    println!("eight slow readers of a {file_kib} KiB file: RSS grew {grew} KiB");
    assert!(
        grew < file_kib,
        "eight slow readers of a {file_kib} KiB file grew the server's RSS {grew} KiB"
    );
    // The server serves on beside them.
    assert_eq!(http_support::post(addr, &headers, &read).await.status, 200);
}

#[tokio::test]
async fn skills_get_over_http_needs_no_mcp_name_header() {
    // The header rules name their methods (tools/call, prompts/get, resources/read);
    // an extension's method that names a target is not held to them.
    let mcp = McpServer::new("docs", "1").extension(pdf_tools());
    let addr = crate::http_support::serve_default(mcp.server().unwrap()).await;
    let headers = crate::http_support::mcp_headers("skills/get", None);
    let body = crate::http_support::body(
        1,
        "skills/get",
        serde_json::json!({"uri": "skill://pdf-tools/SKILL.md"}),
    );
    let answer = crate::http_support::post(addr, &headers, &body).await;
    let json = answer.json();
    assert_eq!(
        json["result"]["skill"]["uri"], "skill://pdf-tools/SKILL.md",
        "{json}"
    );
}
