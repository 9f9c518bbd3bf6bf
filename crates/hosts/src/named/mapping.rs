//! Directories between this machine and a host: a named host's `workspace` here is its `workdir`
//! there (seed 004's workspace directory ↔ container workdir).

use std::path::Path;

use super::NamedHost;

/// Where a call runs on the host: `requested` (the call's `cwd`, as given) or, without one, the
/// session's directory or the tool's, mapped. `None`: the host's own starting directory.
pub fn remote_cwd(host: Option<&NamedHost>, requested: Option<&str>, tool_cwd: &Path) -> Option<String> {
    let Some(named) = host else {
        return requested.map(str::to_owned);
    };
    match requested {
        Some(dir) if !Path::new(dir).is_absolute() => Some(dir.to_owned()),
        Some(dir) => Some(to_remote(named, Path::new(dir)).unwrap_or_else(|| dir.to_owned())),
        None => to_remote(named, tool_cwd).or_else(|| named.workdir.clone()),
    }
}

/// `local` under the workspace, as the same place under the workdir.
fn to_remote(named: &NamedHost, local: &Path) -> Option<String> {
    let (workspace, workdir) = (named.workspace.as_deref()?, named.workdir.as_deref()?);
    let rest = local.strip_prefix(workspace).ok()?;
    Some(joined(Path::new(workdir), rest))
}

/// The result's directory on this machine's side: under the workdir, the same place under the
/// workspace; elsewhere as the host said.
pub fn local_cwd(host: Option<&NamedHost>, remote: &str) -> String {
    let Some((workspace, workdir)) =
        host.and_then(|h| Some((h.workspace.as_deref()?, h.workdir.as_deref()?)))
    else {
        return remote.to_owned();
    };
    match Path::new(remote).strip_prefix(workdir) {
        Ok(rest) => joined(workspace, rest),
        Err(_) => remote.to_owned(),
    }
}

/// `base/rest`, without a trailing `/` when `rest` is empty.
fn joined(base: &Path, rest: &Path) -> String {
    if rest.as_os_str().is_empty() {
        base.display().to_string()
    } else {
        base.join(rest).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named() -> NamedHost {
        NamedHost {
            target: crate::HostTarget::parse("docker:web").unwrap(),
            workspace: Some("/home/me/proj".into()),
            workdir: Some("/work".into()),
            env: std::collections::BTreeMap::new(),
        }
    }

    #[test]
    fn a_directory_in_the_workspace_maps_to_the_workdir_and_back() {
        let host = named();
        let tool = Path::new("/home/me/proj");
        assert_eq!(remote_cwd(Some(&host), None, tool).as_deref(), Some("/work"));
        assert_eq!(
            remote_cwd(Some(&host), Some("/home/me/proj/src/a b"), tool).as_deref(),
            Some("/work/src/a b")
        );
        assert_eq!(
            remote_cwd(Some(&host), Some("/etc"), tool).as_deref(),
            Some("/etc")
        );
        assert_eq!(remote_cwd(Some(&host), Some("src"), tool).as_deref(), Some("src"));
        assert_eq!(
            remote_cwd(Some(&host), None, Path::new("/elsewhere")).as_deref(),
            Some("/work")
        );
        assert_eq!(local_cwd(Some(&host), "/work/src"), "/home/me/proj/src");
        assert_eq!(local_cwd(Some(&host), "/work"), "/home/me/proj");
        assert_eq!(local_cwd(Some(&host), "/workshop"), "/workshop");
        assert_eq!(local_cwd(Some(&host), "/tmp"), "/tmp");
    }

    #[test]
    fn an_unnamed_host_takes_directories_as_given() {
        assert_eq!(remote_cwd(None, None, Path::new("/x")), None);
        assert_eq!(
            remote_cwd(None, Some("/srv"), Path::new("/x")).as_deref(),
            Some("/srv")
        );
        assert_eq!(local_cwd(None, "/srv"), "/srv");
    }
}
