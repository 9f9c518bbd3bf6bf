//! `server.json` for the MCP registry: the server's name (the one `package.json`'s `mcpName` and the
//! wheel's README marker carry) and how to start it from each package, `shellgate mcp` over stdio.

use std::path::PathBuf;

use serde_json::json;

use super::Release;

/// The schema the file follows.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// Write `server.json` into `release.out`.
pub fn write(release: &Release) -> anyhow::Result<PathBuf> {
    let path = release.out.join("server.json");
    let mut text = serde_json::to_string_pretty(&server(release))?;
    text.push('\n');
    std::fs::write(&path, text)?;
    Ok(path)
}

fn server(release: &Release) -> serde_json::Value {
    let package = |registry: &str| {
        json!({
            "registryType": registry,
            "identifier": "shellgate",
            "version": release.version,
            "transport": { "type": "stdio" },
            "packageArguments": [{ "type": "positional", "value": "mcp" }],
        })
    };
    json!({
        "$schema": SCHEMA,
        "name": super::MCP_NAME,
        "title": "shellgate",
        "description": "Runs shell commands for an agent: judged, sandboxed, with bounded exact output",
        "version": release.version,
        "repository": { "url": super::REPOSITORY, "source": "github" },
        "websiteUrl": super::REPOSITORY,
        "packages": [package("npm"), package("pypi")],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_packages_start_the_mcp_server() {
        let value = server(&Release::for_tests());
        assert_eq!(value["name"], "io.github.shellgate/shellgate");
        let kinds: Vec<&str> = value["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["registryType"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["npm", "pypi"]);
        assert_eq!(value["packages"][0]["packageArguments"][0]["value"], "mcp");
        // The registry allows at most 100 characters of description.
        assert!(value["description"].as_str().unwrap().len() <= 100);
    }
}
