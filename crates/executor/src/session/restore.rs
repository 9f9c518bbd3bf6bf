//! A session's current state for shells outside it: a background job or a terminal run started "in" a
//! session begins where the session is (variables, functions, aliases, options) without touching it.
//!
//! The state is the one a busy session's fresh shell gets: the last confirmed save, reduced by
//! [`script::restorable_state`]. It reaches the new shell as a private file (mode 0600, in the manager's
//! private directory) that the shell sources silently before the command and removes right after; the
//! [`StateFile`] guard removes it too, for a shell that never got that far.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{SessionKey, SessionManager, lock};
use crate::session::script::{self, ShellKind, is_valid_name, quote};
use crate::{LaunchSpec, ShellConfig, shell_spec};

/// What a new shell needs to start from a session's current state (see
/// [`SessionManager::restorable_state`]).
#[derive(Clone)]
pub struct SessionState {
    program: PathBuf,
    kind: ShellKind,
    script: Arc<Vec<u8>>,
    dir: PathBuf,
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The state holds the session's variables (tokens, passwords): never print it.
        f.debug_struct("SessionState")
            .field("program", &self.program)
            .field("kind", &self.kind)
            .field("bytes", &self.script.len())
            .finish_non_exhaustive()
    }
}

impl SessionManager {
    /// The current state of session `key`, for starting a separate shell from it; `None` when the
    /// session has not run a command yet (or is closed). Reading it changes nothing in the session, and
    /// works while a command runs in it.
    pub fn restorable_state(&self, key: &SessionKey) -> Option<SessionState> {
        let slot = lock(&self.inner.sessions).get(key).cloned()?;
        let saved = {
            let shared = lock(&slot.shared);
            if shared.closed {
                return None;
            }
            shared.last_saved_state()?
        };
        Some(SessionState {
            program: slot.program.clone(),
            kind: slot.kind,
            script: Arc::new(script::restorable_state(slot.kind, &saved)),
            dir: self.inner.dir.clone(),
        })
    }
}

/// What the sessions of one name hold now, for judging a command that will run in them.
#[derive(Debug, Clone, Default)]
pub struct SessionsNamed {
    /// A command is running in one of them: its state may change before the next one runs.
    pub busy: bool,
    /// The last saved state of each (variables, functions, aliases), with its shell family.
    pub saved: Vec<(ShellKind, String)>,
}

impl SessionManager {
    /// The saved states of every open session named `name` (a name has one session per sandbox).
    /// The state is written by the session's shell: a command able to write files there could have
    /// forged it, so it tells what earlier commands left, not what a hostile one hid.
    pub fn saved_states(&self, name: &str) -> SessionsNamed {
        let slots: Vec<_> = lock(&self.inner.sessions)
            .values()
            .filter(|slot| slot.name == name)
            .cloned()
            .collect();
        let mut out = SessionsNamed::default();
        for slot in slots {
            let shared = lock(&slot.shared);
            if shared.closed {
                continue;
            }
            out.busy |= shared.busy;
            if let Some(saved) = shared.last_saved_state() {
                out.saved
                    .push((slot.kind, String::from_utf8_lossy(&saved).into_owned()));
            }
        }
        out
    }
}

impl SessionState {
    /// The session's shell program (the new shell must be the same family to read the state).
    pub fn shell(&self) -> &Path {
        &self.program
    }

    /// The session's shell family.
    pub fn kind(&self) -> ShellKind {
        self.kind
    }

    /// Like [`shell_spec`], but the shell is the session's and it restores this state before running
    /// `command`: sourced with stdin `/dev/null` and all output discarded, then the state file is removed.
    /// `TERM` as the launch sets it and the variables in `keep` (the call's own) win over the state.
    ///
    /// The returned [`StateFile`] must live until the shell has started reading it; drop it when the
    /// process has ended (or failed to start) — dropping removes the file if the shell did not.
    ///
    /// # Errors
    /// The state file cannot be written.
    pub fn shell_spec(
        &self,
        config: &ShellConfig,
        command: &str,
        cwd: impl Into<PathBuf>,
        keep: &BTreeMap<String, String>,
    ) -> io::Result<(LaunchSpec, StateFile)> {
        let file = StateFile::create(&self.dir, &self.script)?;
        let config = ShellConfig {
            shell: Some(self.program.clone()),
            ..config.clone()
        };
        let mut spec = shell_spec(&config, command, cwd);
        if let Some(script) = spec.args.last_mut() {
            let prologue = self.prologue(file.path(), keep);
            *script = match self.kind {
                // bash parses a `-c` string one command at a time, so the restored aliases apply below.
                ShellKind::Bash => format!("{prologue}{script}"),
                // zsh parses all of it first: the command is parsed again once the aliases exist.
                ShellKind::Zsh => format!(
                    "{prologue}\\builtin eval \"\\builtin unset __shellgate_x;$__shellgate_x\"{}",
                    quote(script)
                ),
            };
        }
        Ok((spec, file))
    }

    /// The lines run before the command.
    fn prologue(&self, file: &Path, keep: &BTreeMap<String, String>) -> String {
        let file = quote(&file.to_string_lossy());
        let mut s = String::from("__shellgate_term=${TERM-}\n");
        match self.kind {
            ShellKind::Bash => {
                let _ = writeln!(s, "{{ \\builtin source {file}; }} </dev/null >/dev/null 2>&1");
            }
            // zsh applies the saved options while sourcing; a trace the session switched on is paused
            // here (inside the redirection) and resumed just before the command.
            ShellKind::Zsh => {
                let _ = writeln!(
                    s,
                    "{{ \\builtin source {file}; __shellgate_x=; if [[ -o xtrace ]]; then \
                     __shellgate_x='\\builtin setopt xtrace;'; \\builtin unsetopt xtrace; fi }} \
                     </dev/null >/dev/null 2>&1"
                );
            }
        }
        let _ = writeln!(s, "\\builtin command rm -f -- {file} 2>/dev/null || \\builtin :");
        s.push_str(
            "\\builtin test -n \"$__shellgate_term\" && \\builtin export TERM=\"$__shellgate_term\"\n",
        );
        for (name, value) in keep {
            if is_valid_name(name) && !value.contains('\0') {
                let _ = writeln!(s, "\\builtin export {name}={}", quote(value));
            }
        }
        s.push_str("\\builtin unset __shellgate_term\n");
        match self.kind {
            // bash keeps its options as two saved variables; they are applied last, so `set -e` or
            // `set -u` of the session cannot trip the lines above, and inside a group whose redirection
            // keeps the rest out of a trace the session switched on.
            ShellKind::Bash => s.push_str(
                "\\builtin unset -f __shellgate_begin __shellgate_end 2>/dev/null || \\builtin :\n\
                 { if \\builtin declare -F __shellgate_options >/dev/null; then \
                 __shellgate_options \"${__shellgate_so-}\" \"${__shellgate_bo-}\"; \
                 \\builtin unset -f __shellgate_options; fi; \
                 \\builtin unset __shellgate_so __shellgate_bo; } 2>/dev/null\n",
            ),
            ShellKind::Zsh => {
                s.push_str("\\builtin unset -f __shellgate_end __shellgate_rc 2>/dev/null || \\builtin :\n");
            }
        }
        s
    }
}

/// A private file holding a session state for a new shell, alone in a directory of its own (so a
/// sandbox can let the shell remove it without opening anything else); removed when dropped.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    fn create(dir: &Path, contents: &[u8]) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let own_dir = dir.join(format!(
            "state-{}-{}-{nanos:x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&own_dir)?;
        let this = Self {
            path: own_dir.join("state"),
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&this.path)?;
        file.write_all(contents)?;
        Ok(this)
    }

    /// Where the state is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory holding only this file (the shell that reads it removes it).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(&self.path)
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(self.dir());
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::CancellationToken;

    #[tokio::test]
    async fn a_session_state_starts_a_separate_shell_and_its_file_goes() {
        let Some(bash) = crate::find_on_path("bash") else {
            assert!(
                std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
                "bash is required (SHELLGATE_REQUIRE_ALL=1) but not on PATH"
            );
            return;
        };
        let sessions = SessionManager::default();
        let key = SessionKey::new("restore-unit").with_shell(&bash);
        assert!(
            sessions.restorable_state(&key).is_none(),
            "no state before the first command"
        );

        let env = BTreeMap::new();
        let mut out = shellgate_sink::Collect::default();
        let t = Duration::from_secs(30);
        let setup = "export Q='a b'; qf(){ echo \"qf $Q\"; }";
        sessions
            .run(&key, setup, None, &env, t, &mut out, CancellationToken::new())
            .await;
        let state = sessions.restorable_state(&key).expect("a state after a command");
        assert_eq!(state.kind(), ShellKind::Bash);
        assert!(
            !format!("{state:?}").contains("a b"),
            "Debug must not show the values"
        );

        let keep = BTreeMap::from([("K".to_owned(), "it's".to_owned())]);
        let (spec, file) = state
            .shell_spec(&ShellConfig::default(), "qf; echo \"K=$K\"", "/", &keep)
            .unwrap();
        assert!(file.path().exists());
        let output = std::process::Command::new(&spec.program)
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "qf a b\nK=it's\n");
        assert!(
            !file.path().exists(),
            "the shell removes the file after reading it"
        );
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());

        // The separate shell changed nothing in the session.
        let mut out = shellgate_sink::Collect::default();
        sessions
            .run(
                &key,
                "echo \"K=${K-unset}\"",
                None,
                &env,
                t,
                &mut out,
                CancellationToken::new(),
            )
            .await;
        assert_eq!(out.bytes, b"K=unset\n");
        sessions.shutdown();
    }

    #[test]
    fn an_unused_state_file_is_removed_when_dropped() {
        let dir = std::env::temp_dir();
        let file = StateFile::create(&dir, b"X=1\n").unwrap();
        let path = file.path().to_path_buf();
        assert_eq!(std::fs::read(&path).unwrap(), b"X=1\n");
        // Alone in a private directory of its own.
        let own_dir = file.dir().to_path_buf();
        assert_eq!(path.parent(), Some(own_dir.as_path()));
        assert_ne!(own_dir, dir);
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&own_dir).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o700);
        drop(file);
        assert!(!path.exists() && !own_dir.exists());
    }
}
