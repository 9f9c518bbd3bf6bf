//! Everything a call decides before it runs, in the order the stages answer: elevation, the
//! normalized command, the sandbox, the session and directory, the verdict, the timeout.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::SessionKey;
use shellgate_intercept::{Context, Elevation, SessionView, elevation};
use shellgate_normalize::{NormalizeContext, Normalized};
use shellgate_pty::pty_selected;

use super::BashTool;
use crate::gate::Redacting as _;
use crate::{BashParams, ToolResult, ToolStatus};
use shellgate_sandbox::{CallRefusal, DenialWatch, SandboxRun};

/// A call that may run, with what every stage decided about it.
pub(super) struct Plan {
    /// The request; `elevated` now means granted.
    pub(super) params: BashParams,
    pub(super) normalized: Normalized,
    /// Notices so far, in the order the stages gave them.
    pub(super) notices: Vec<String>,
    pub(super) use_pty: bool,
    pub(super) sandbox: Option<SandboxRun>,
    /// Present exactly when `sandbox` is.
    pub(super) watch: Option<DenialWatch>,
    pub(super) session: Option<SessionKey>,
    /// Whether the call names its own directory (`cwd`, or a lifted `cd DIR &&`).
    pub(super) cwd_requested: bool,
    /// The directory of a session that has run before.
    pub(super) live_cwd: Option<PathBuf>,
    pub(super) cwd: PathBuf,
    pub(super) timeout: Duration,
}

/// What [`BashTool::prepare`] decided.
pub(super) struct Prepared {
    /// The call counts as approved (a person approved it, or an elevation bypasses approvals).
    pub(super) approved: bool,
    pub(super) use_pty: bool,
    pub(super) normalized: Normalized,
    pub(super) notices: Vec<String>,
}

impl BashTool {
    /// Decide how a call runs; `Err` is the result of a call that must not (redacted where it could
    /// carry a secret).
    pub(super) fn plan(&self, mut params: BashParams, approved: bool) -> Result<Plan, Box<ToolResult>> {
        let base_cwd = self.config.cwd.display().to_string();
        let Prepared {
            approved,
            use_pty,
            normalized,
            mut notices,
        } = self.prepare(&mut params, approved);
        let session_name = self.session_name(&params);
        // A session keeps its own directory: relative paths resolve against it.
        let live_cwd = session_name.and_then(|name| self.live_session_cwd(name));
        let base = live_cwd.clone().unwrap_or_else(|| self.config.cwd.clone());
        // A lifted `cd` into a directory that does not exist: the command runs as written, so bash
        // answers as it would (`cd: …: No such file or directory`, exit 1) (SPEC N-8).
        let (normalized, mut notices) = match &normalized.cwd {
            Some(dir) if params.cwd.is_none() && resolve_cwd(&base, Some(dir)).is_err() => {
                let lifted: Vec<&String> = normalized.rewrites.iter().map(|r| &r.message).collect();
                notices.retain(|n| !lifted.contains(&n));
                let written = self.normalize(&params, use_pty, true);
                notices.extend(written.rewrites.iter().map(|r| r.message.clone()));
                (written, notices)
            }
            _ => (normalized, notices),
        };
        let requested_cwd = params.cwd.as_deref().or(normalized.cwd.as_deref());
        let sandbox = self.sandbox_for(&params, &mut notices);
        let cwd = match resolve_cwd(&base, requested_cwd) {
            Ok(cwd) => cwd,
            // A session whose directory was deleted falls back to an existing ancestor itself.
            Err(_) if session_name.is_some() && requested_cwd.is_none() => base,
            Err(message) => {
                return Err(Box::new(ToolResult::not_run(
                    ToolStatus::FailedToStart,
                    message,
                    base_cwd,
                )));
            }
        };
        let cwd_requested = requested_cwd.is_some();

        self.admit(&params, &normalized, &cwd, approved, &mut notices)?;
        let mut sandbox = sandbox?;
        if let Some(domains) = &params.allowed_domains {
            SandboxRun::narrow(sandbox.as_mut(), domains).map_err(|r| self.refused(&r, &cwd))?;
        }
        let watch = sandbox.as_mut().map(|run| {
            // The supervisor reports the run's denials and makes its Unix connects.
            run.use_supervisor();
            DenialWatch::start(&mut notices)
        });
        // Once the sandbox's layer is final (it takes part in the key).
        let session = self.session_for(&params, sandbox.as_ref());
        if let (Some(key), Some(name)) = (&session, session_name)
            && key.name != name
            && params.allowed_domains.is_some()
        {
            notices.push(SandboxRun::narrowed_session_notice(&key.name, name));
        }

        let (timeout, clamp_notice) = self.clamp_timeout(params.timeout);
        notices.extend(clamp_notice);

        if params.pty && !use_pty {
            notices.push(
                "A pseudo-terminal was requested but is not available here; the command ran with pipes."
                    .into(),
            );
        }
        Ok(Plan {
            params,
            normalized,
            notices,
            use_pty,
            sandbox,
            watch,
            session,
            cwd_requested,
            live_cwd,
            cwd,
            timeout,
        })
    }

    /// The sandbox a call gets (a refusal as the call's result). An elevated run (granted before)
    /// runs outside the sandbox (SPEC X-4); the host check stays.
    fn sandbox_for(
        &self,
        params: &BashParams,
        notices: &mut Vec<String>,
    ) -> Result<Option<SandboxRun>, Box<ToolResult>> {
        self.sandboxing
            .decide_with_domains(
                params.sandbox,
                params.host.as_deref(),
                &self.approvals.domains(),
                notices,
            )
            .map(|run| run.filter(|_| !params.elevated))
            .map_err(|r| self.refused(&r, &self.config.cwd))
    }

    /// The redacted result of a call the sandbox refuses.
    fn refused(&self, refusal: &CallRefusal, cwd: &Path) -> Box<ToolResult> {
        Box::new(self.env_gate.redacted(crate::sandboxing::refused(refusal, cwd)))
    }

    /// The first steps of every call, here or on a host: elevation, then the normalized command.
    pub(super) fn prepare(&self, params: &mut BashParams, approved: bool) -> Prepared {
        let (approved, elevation_notice) = self.elevate(params, approved);
        let use_pty = pty_selected(params.pty);
        // A terminal cannot be closed the way `head` closes its pipe, so there the limiter stays in the
        // script; with pipes it is lifted and the output closed once its lines are in.
        let normalized = self.normalize(params, use_pty, params.cwd.is_some());
        let mut notices: Vec<String> = normalized.rewrites.iter().map(|r| r.message.clone()).collect();
        notices.extend(elevation_notice);
        Prepared {
            approved,
            use_pty,
            normalized,
            notices,
        }
    }

    /// Apply the policy's elevation rules: `params.elevated` is cleared unless granted. Returns whether
    /// the call counts as approved, and the notice to give.
    fn elevate(&self, params: &mut BashParams, approved: bool) -> (bool, Option<String>) {
        match elevation(self.config.policy.as_ref(), params.elevated) {
            Elevation::No => (approved, None),
            Elevation::Refused(notice) => {
                params.elevated = false;
                (approved, Some(notice))
            }
            Elevation::Granted { .. } if self.config.sandbox.mode.is_none() => {
                params.elevated = false;
                (
                    approved,
                    Some(
                        "elevated has no effect: no sandbox is configured, the command runs as any other."
                            .into(),
                    ),
                )
            }
            Elevation::Granted {
                bypass_approvals,
                notice,
            } => (approved || bypass_approvals, Some(notice)),
        }
    }

    /// The verdict on a call: `Ok` with its notices when it may run (an ask a person approved counts),
    /// else the redacted result that answers it (pending approval, blocked).
    pub(super) fn admit(
        &self,
        params: &BashParams,
        normalized: &Normalized,
        cwd: &Path,
        approved: bool,
        notices: &mut Vec<String>,
    ) -> Result<(), Box<ToolResult>> {
        let ctx = Context {
            tool_names: self.config.tool_names.clone(),
            cwd: Some(cwd.to_path_buf()),
            session: self
                .session_name(params)
                .map(|name| Arc::new(self.session_view(name))),
            workspace: Some(self.config.cwd.clone()),
        };
        let call = crate::gate::Call {
            params,
            normalized,
            ctx: &ctx,
            cwd,
        };
        match self.judge(&call) {
            Ok(judged) => notices.extend(judged),
            Err(result) if approved && result.status == ToolStatus::ApprovalPending => {
                notices.extend(result.notices);
            }
            Err(result) if result.status == ToolStatus::ApprovalPending => {
                return Err(Box::new(
                    self.env_gate.redacted(self.pending(*result, params, cwd)),
                ));
            }
            Err(result) => return Err(Box::new(self.env_gate.redacted(*result))),
        }
        Ok(())
    }
}

impl BashTool {
    /// What the sessions named `name` hold that changes what a command's words run.
    fn session_view(&self, name: &str) -> SessionView {
        let named = self.sessions.saved_states(name);
        SessionView::of_saved_states(named.busy, named.saved.iter().map(|(_, text)| text.as_str()))
    }

    /// The normalized command; `keep_cd` leaves a leading `cd DIR &&` in the script.
    fn normalize(&self, params: &BashParams, use_pty: bool, keep_cd: bool) -> Normalized {
        let ctx = NormalizeContext::default()
            .with_explicit_cwd(keep_cd)
            .with_keep_limiters(use_pty);
        self.normalizer.normalize_with(&params.command, &ctx)
    }
}

/// Resolve and validate the working directory (SPEC E-4); `~` means the home directory.
fn resolve_cwd(base: &Path, requested: Option<&str>) -> Result<PathBuf, String> {
    shellgate_executor::resolve_written_cwd(base, requested).map_err(|e| e.to_string())
}
