//! Artifacts over MCP: the `artifact` tool (ranged reads, grep, listing) and the `artifact://<id>`
//! resources. Both read the store the `bash` tool spills into, through the same code as the
//! JSON-RPC `artifact` method.

use std::fmt::Write as _;

use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shellgate::sink::{ArtifactId, ArtifactStore, ByteRange};

use crate::artifact_cmd::{self, RPC_DEFAULT_LIMIT, RPC_DEFAULT_MAX_BYTES, RPC_MAX_BYTES};

/// Most bytes one `resources/read` returns; a larger artifact is cut here with a note saying how to
/// read the rest through the `artifact` tool.
pub const RESOURCE_MAX_BYTES: u64 = 8 << 20;

/// What the `artifact` tool does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactAction {
    /// Read lines, bytes or matching lines of one artifact.
    #[default]
    Read,
    /// List the stored artifacts.
    List,
}

/// Parameters of the `artifact` tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactParams {
    /// What to do.
    #[serde(default)]
    pub action: ArtifactAction,
    /// The artifact: `artifact://<n>` or `<n>` (required to read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// First line to return, 1-based (with `grep`: first line searched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Most lines to return (with `grep`: most matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Return only the lines matching this regular expression, with their line numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grep: Option<String>,
    /// Read bytes from this 0-based offset instead of lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<u64>,
    /// Most bytes of text to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Return the bytes as stored, terminal escapes included.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw: bool,
}

/// Defaults shown in the `artifact` tool's schema.
pub fn schema_defaults() -> Vec<(&'static str, Value)> {
    vec![
        ("action", Value::from("read")),
        ("offset", Value::from(1)),
        ("limit", Value::from(RPC_DEFAULT_LIMIT)),
        ("max_bytes", Value::from(RPC_DEFAULT_MAX_BYTES)),
        ("raw", Value::from(false)),
    ]
}

/// The `artifact` tool's description.
pub fn description() -> String {
    format!(
        "Read the full output of a command whose output was truncated; the truncation notice names it \
         (`Full output: artifact://<id>`). `action: \"read\"` (default) returns lines `offset`.. \
         (1-based, default 1) up to `limit` lines (default {RPC_DEFAULT_LIMIT}); or, with \
         `byte_offset`, bytes from that 0-based offset; or, with `grep`, the lines matching that \
         regular expression (at most `limit` matches, from line `offset`). Every read returns at most \
         `max_bytes` of text (default {RPC_DEFAULT_MAX_BYTES}, at most {RPC_MAX_BYTES}) and says where \
         to continue (`next_offset` / `next_byte_offset`, absent at the end). Text is cleaned of \
         terminal escapes unless `raw: true`. `action: \"list\"` lists the stored artifacts with their \
         sizes. Artifacts are also resources (`artifact://<id>`)."
    )
}

/// Run the `artifact` tool: the structured answer, or the message of a failure.
pub fn call(store: &ArtifactStore, params: &ArtifactParams) -> Result<Value, String> {
    let value = serde_json::to_value(params).map_err(|e| e.to_string())?;
    artifact_cmd::rpc_with(store, &value)
}

/// The text a model sees for an `artifact` answer.
pub fn model_text(answer: &Value) -> String {
    let mut text = String::new();
    if let Some(artifacts) = answer.get("artifacts").and_then(Value::as_array) {
        for a in artifacts {
            let _ = writeln!(
                text,
                "{} {} bytes",
                a["uri"].as_str().unwrap_or("?"),
                a["bytes"].as_u64().unwrap_or(0)
            );
        }
        if artifacts.is_empty() {
            text.push_str("No artifacts.\n");
        }
        return text;
    }
    let id = answer["id"].as_str().unwrap_or("artifact");
    if let Some(matches) = answer.get("matches").and_then(Value::as_array) {
        for m in matches {
            let _ = writeln!(
                text,
                "{}:{}",
                m["line"].as_u64().unwrap_or(0),
                m["text"].as_str().unwrap_or("")
            );
        }
        let more = if answer["truncated"] == Value::Bool(true) {
            " (more matches: raise `limit` or `offset`)"
        } else {
            ""
        };
        let _ = write!(
            text,
            "[{} matching lines of {} in {id}{more}]",
            matches.len(),
            answer["total_lines"]
        );
        return text;
    }
    text.push_str(answer["content"].as_str().unwrap_or(""));
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if let Some(start) = answer.get("byte_offset").and_then(Value::as_u64) {
        let bytes = answer["bytes"].as_u64().unwrap_or(0);
        let _ = write!(
            text,
            "[bytes {start}-{} of {} in {id}",
            start + bytes,
            answer["total_bytes"]
        );
        if let Some(next) = answer["next_byte_offset"].as_u64() {
            let _ = write!(text, "; continue with byte_offset {next}");
        }
    } else {
        let first = answer["offset"].as_u64().unwrap_or(1);
        let lines = answer["lines"].as_u64().unwrap_or(0);
        let last = (first + lines).saturating_sub(1);
        let _ = write!(text, "[lines {first}-{last} of {} in {id}", answer["total_lines"]);
        if let Some(next) = answer["next_offset"].as_u64() {
            let _ = write!(text, "; continue with offset {next}");
        }
    }
    text.push(']');
    text
}

/// Every stored artifact as a resource.
pub fn resources(store: &ArtifactStore) -> Result<Vec<Resource>, String> {
    let artifacts = store.list().map_err(|e| e.to_string())?;
    Ok(artifacts
        .into_iter()
        .map(|a| {
            let name = format!("artifact {}", a.id.0);
            Resource::new(a.uri, name)
                .with_description("Full output of a shellgate command")
                .with_mime_type("text/plain")
                .with_size(a.bytes)
        })
        .collect())
}

/// The `artifact://{id}` template.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new("artifact://{id}", "artifact")
        .with_title("Command output")
        .with_description(
            "The full output of a command whose result was truncated (the id is in the truncation notice).",
        )
        .with_mime_type("text/plain")
}

/// A failed `resources/read`: the uri is not an artifact of this store, or the store failed.
#[derive(Debug)]
pub enum ReadFailure {
    /// No such artifact (bad uri, unknown id).
    NotFound(String),
    /// Reading the store failed.
    Store(String),
}

/// `resources/read` of `uri`: the artifact's text (sanitized), cut at [`RESOURCE_MAX_BYTES`] with a
/// second content block saying how to read on.
pub fn read(store: &ArtifactStore, uri: &str) -> Result<Vec<ResourceContents>, ReadFailure> {
    if !uri.starts_with("artifact://") {
        return Err(ReadFailure::NotFound(format!(
            "{uri} is not an artifact (artifact://<id>)"
        )));
    }
    let id = ArtifactId::parse(uri).map_err(|e| ReadFailure::NotFound(e.to_string()))?;
    let canonical = id.uri();
    let total = store
        .size(uri)
        .map_err(|e| ReadFailure::NotFound(e.to_string()))?;
    let end = total.min(RESOURCE_MAX_BYTES);
    let mut bytes = Vec::with_capacity(end as usize);
    store
        .copy_bytes(
            uri,
            ByteRange {
                start: Some(0),
                end: Some(end),
            },
            &mut bytes,
        )
        .map_err(|e| ReadFailure::Store(e.to_string()))?;
    let mut contents = vec![ResourceContents::text(
        artifact_cmd::clean_text(&bytes, false),
        canonical.clone(),
    )];
    if end < total {
        contents.push(ResourceContents::text(
            format!(
                "[Showing bytes 0-{end} of {total}. Read the rest with the artifact tool: \
                 {{\"id\": \"{canonical}\", \"byte_offset\": {end}}}]"
            ),
            canonical,
        ));
    }
    Ok(contents)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use serde_json::json;
    use shellgate::sink::StoreConfig;

    use super::*;

    fn store_with(bytes: &[u8]) -> (tempfile::TempDir, ArtifactStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(StoreConfig::new(dir.path())).unwrap();
        let mut new = store.create().unwrap();
        new.file.write_all(bytes).unwrap();
        let uri = new.id.uri();
        (dir, store, uri)
    }

    #[test]
    fn resources_list_and_read_the_store() {
        let (_dir, store, uri) = store_with(b"\x1b[1mone\x1b[0m\ntwo\n");
        let listed = resources(&store).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].uri, uri);
        assert_eq!(listed[0].size, Some(16));
        let contents = read(&store, &uri).unwrap();
        let Some(ResourceContents::TextResourceContents { text, .. }) = contents.first() else {
            panic!("{contents:?}")
        };
        assert_eq!(text, "one\ntwo\n");
        assert!(matches!(
            read(&store, "artifact://999"),
            Err(ReadFailure::NotFound(_))
        ));
        assert!(matches!(
            read(&store, "file:///etc/passwd"),
            Err(ReadFailure::NotFound(_))
        ));
    }

    #[test]
    fn tool_reads_lines_and_says_where_to_continue() {
        let text: String = (1..=10).map(|i| i.to_string() + "\n").collect();
        let (_dir, store, uri) = store_with(text.as_bytes());
        let params: ArtifactParams =
            serde_json::from_value(json!({"id": uri, "offset": 3, "limit": 2})).unwrap();
        let answer = call(&store, &params).unwrap();
        assert_eq!(answer["content"], "3\n4\n");
        let shown = model_text(&answer);
        assert!(
            shown.starts_with("3\n4\n[lines 3-4 of 10 in artifact://"),
            "{shown}"
        );
        assert!(shown.ends_with("continue with offset 5]"), "{shown}");
        let grep: ArtifactParams = serde_json::from_value(json!({"id": uri, "grep": "^1"})).unwrap();
        let shown = model_text(&call(&store, &grep).unwrap());
        assert!(
            shown.starts_with("1:1\n10:10\n[2 matching lines of 10"),
            "{shown}"
        );
        assert!(serde_json::from_value::<ArtifactParams>(json!({"bytes": "1:2"})).is_err());
    }
}
