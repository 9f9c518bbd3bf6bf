//! How a call's processes start: the launch spec (a fresh shell, or one restored from a session's
//! state), the session it runs in, and what is known of that session's live shell.

use std::path::{Path, PathBuf};

use shellgate_executor::{
    LaunchSpec, SessionKey, StateFile, non_interactive, shell_spec, shell_spec_reporting_status,
};
use shellgate_normalize::Normalized;

use super::BashTool;
use super::plan::Plan;
use crate::BashParams;

impl BashTool {
    /// The launch spec of a planned call, wrapped by its sandbox and then by the configured layers.
    pub(super) fn launch(&self, plan: &Plan, notices: &mut Vec<String>) -> (LaunchSpec, Option<StateFile>) {
        let (mut spec, state_file) = self.launch_spec(
            plan.session.as_ref(),
            &plan.params,
            &plan.normalized,
            &plan.cwd,
            plan.use_pty,
            notices,
        );
        spec.pty = plan.use_pty;
        spec.env.extend(plan.params.env.clone());
        spec.env_remove.extend(self.env_gate.removals.iter().cloned());
        spec.timeout = Some(plan.timeout);
        spec.kill_grace = self.config.kill_grace;
        let spec = non_interactive(spec);
        let spec = match &plan.sandbox {
            // The shell removes the state file once it has read it: its directory (holding only
            // that file) is writable.
            Some(sandbox) => sandbox.wrap_with_engine_root(spec, state_file.as_ref().map(StateFile::dir)),
            None => spec,
        };
        (self.config.layers.apply(spec), state_file)
    }

    /// The launch spec of a command that runs outside the session's own shell (a pseudo-terminal run, a
    /// job). A call in a session that has run before starts from the session's state (variables,
    /// functions, aliases, options), which the shell reads from the returned file: keep it until the
    /// process has ended.
    fn launch_spec(
        &self,
        session: Option<&SessionKey>,
        params: &BashParams,
        normalized: &Normalized,
        cwd: &Path,
        use_pty: bool,
        notices: &mut Vec<String>,
    ) -> (LaunchSpec, Option<StateFile>) {
        // A command whose `| head` was lifted still reports its status, from which the status of the
        // pipeline as written follows.
        let plain = || {
            if normalized.limits.is_empty() {
                shell_spec(&self.config.shell, &normalized.script, cwd)
            } else {
                shell_spec_reporting_status(&self.config.shell, &normalized.script, cwd)
            }
        };
        let detached = use_pty || params.background || params.yield_ms.is_some();
        let Some(key) = session.filter(|_| detached) else {
            return (plain(), None);
        };
        let Some(state) = self.sessions.restorable_state(key) else {
            return (plain(), None);
        };
        match state.shell_spec(&self.config.shell, &normalized.script, cwd, &params.env) {
            Ok((spec, file)) => (spec, Some(file)),
            Err(e) => {
                notices.push(format!(
                    "The state of session '{}' could not be restored ({e}); the command started with \
                     the session's directory only.",
                    key.name
                ));
                (plain(), None)
            }
        }
    }

    /// The session a call runs in, or `None` for a fresh shell. A sandboxed call gets a session whose
    /// shell runs in its sandbox.
    pub(super) fn session_for(
        &self,
        params: &BashParams,
        sandbox: Option<&shellgate_sandbox::SandboxRun>,
    ) -> Option<SessionKey> {
        let mut key = SessionKey::new(self.session_name(params)?);
        key.shell = self.config.shell.clone();
        if let Some(sandbox) = sandbox {
            sandbox.session_key(&mut key);
        }
        Some(key)
    }

    /// The session a call runs in, `None` for a one-shot run.
    pub(super) fn session_name<'a>(&'a self, params: &'a BashParams) -> Option<&'a str> {
        let name = params.session.as_deref().unwrap_or(&self.config.default_session);
        (name != crate::config::NO_SESSION && !name.is_empty()).then_some(name)
    }

    /// The pid of session `name`'s live shell.
    pub(super) fn session_pid(&self, name: &str) -> Option<u32> {
        self.sessions.info(name).and_then(|s| s.pid)
    }

    /// The working directory of a session that has run before, `None` for a new one.
    pub(super) fn live_session_cwd(&self, name: &str) -> Option<PathBuf> {
        self.sessions.info(name).map(|s| s.cwd)
    }
}

/// The text a session shell runs. A single stage left after a lifted `| head` runs in a subshell, as it
/// would in bash's pipeline: a builtin loop there (`while :; do echo; done`) then meets the closed
/// output, not the session's shell.
pub(super) fn session_text(normalized: &Normalized) -> std::borrow::Cow<'_, str> {
    let single_stage = shellgate_normalize::written::last_pipeline(normalized)
        .is_some_and(|(pipeline, whole)| whole && pipeline.commands.len() == 1);
    if normalized.limits.is_empty() || !single_stage {
        return normalized.script.as_str().into();
    }
    format!("(\n{}\n)", normalized.script).into()
}
