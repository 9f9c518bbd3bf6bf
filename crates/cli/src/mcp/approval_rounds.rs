//! Approvals as multi-round-trip results (protocol 2026-07-28, where a server may not send requests
//! to the client).
//!
//! A `bash` call whose command needs a person answers `input_required`: an embedded elicitation
//! for the decision and a sealed `requestState`. The client asks the person and retries the same
//! call with `inputResponses` and the state echoed back. The state is the only link between the two
//! calls, and it passes through the client (and so through reach of the model driving it), so it is
//! treated as hostile input:
//!
//! - **sealed**: HMAC-SHA256 with a key drawn at start from the OS and never written anywhere, so
//!   no state can be made or altered outside this process (a restart invalidates every state);
//! - **bound** to a digest of the tool name and the exact arguments of the call that asked, so it
//!   cannot resume an approval from a retry with other arguments;
//! - **single-use**: each state carries a nonce redeemed once, by the retry that carries the
//!   person's answer; a replay is refused. A retry without a usable answer spends nothing (the
//!   client lost the answer, or asks again): it gets the same question and state back;
//! - **time-limited**: it expires with `[approvals] elicitation_timeout_secs`.
//!
//! The approval a state resumes is the engine's own pending approval, decided like any other
//! (`BashTool::approve`), so what runs is the command that was judged, never the retry's text.

use std::collections::HashMap;
use std::io::Read as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{
    ElicitResult, InputRequest, InputRequests, InputRequiredResult, InputResponses, RequestStateCodec,
    SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use shellgate::{Approval, ApprovalDecision, ToolResult};

use super::domain_questions;
use super::elicit::{self, Answer};

/// The key of the approval question in `inputRequests` / `inputResponses`.
pub const INPUT_KEY: &str = "approval";
/// The keys of destination questions: this, then the approval's short id.
pub const DOMAIN_KEY_PREFIX: &str = "network-";

/// What a sealed state holds (readable by the client: nothing secret).
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    /// The engine's id of the pending approval (empty when the state asks about destinations).
    approval: String,
    /// Redeemed once.
    nonce: String,
    /// Destination approvals asked together: each input key with the engine's approval id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    domains: Vec<(String, String)>,
}

/// What a retry resumes.
#[derive(Debug, Clone, PartialEq)]
pub enum Resumed {
    /// A command's approval and the person's decision.
    Command(String, ApprovalDecision),
    /// Destinations a run's proxy refused: the run's result, held since it asked, and each
    /// approval id with what the person answered (unanswered ones stay pending).
    Domains {
        /// The result of the run that met the destinations.
        held: Box<ToolResult>,
        /// Approval id → answer.
        answers: Vec<(String, Answer)>,
    },
}

/// Why a retry does not resume an approval.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Forged, altered, bound to other arguments, expired, or malformed.
    #[error("the request state is not valid for this call ({0})")]
    Invalid(String),
    /// Opened, but its nonce was already redeemed (or never issued by this process).
    #[error("the request state was already used")]
    Replayed,
    /// The retry carries no usable answer to the approval question.
    #[error("the retry has no answer to the approval question: {0}")]
    NoAnswer(String),
}

/// A state issued and not yet redeemed.
struct Outstanding {
    /// When it stops being redeemable.
    until: Instant,
    /// The question it answers, asked again when a retry comes without an answer.
    question: InputRequests,
}

/// The sealing key and the nonces issued and not yet redeemed.
pub struct ApprovalRounds {
    codec: RequestStateCodec,
    /// Nonce → the state it seals.
    outstanding: Mutex<HashMap<String, Outstanding>>,
    /// Nonces issued so far.
    issued: AtomicU64,
    /// The results of runs whose destinations are being asked about, by nonce, returned by the
    /// retry (dropped with their nonce's expiry).
    held: Mutex<HashMap<String, ToolResult>>,
}

impl ApprovalRounds {
    /// A fresh key from the OS.
    pub fn new() -> std::io::Result<Self> {
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        Self::with_key(&key)
    }

    fn with_key(key: &[u8]) -> std::io::Result<Self> {
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(std::io::Error::other)?;
        Ok(Self {
            codec,
            outstanding: Mutex::new(HashMap::new()),
            issued: AtomicU64::new(0),
            held: Mutex::new(HashMap::new()),
        })
    }

    /// The `input_required` result asking the person about `approval` for the call `tool(args)`;
    /// its state is redeemable once within `ttl`.
    pub fn ask(&self, tool: &str, args: &Value, approval: &Approval, ttl: Duration) -> InputRequiredResult {
        let nonce = self.fresh_nonce();
        let sealed = Sealed {
            approval: approval.id.clone(),
            nonce: nonce.clone(),
            domains: Vec::new(),
        };
        let mut requests = InputRequests::new();
        requests.insert(
            INPUT_KEY.to_owned(),
            InputRequest::Elicitation(elicit::request(approval)),
        );
        let state = self.seal(tool, args, &sealed, &requests, ttl);
        InputRequiredResult::new(Some(requests), Some(state))
    }

    /// The `input_required` result asking the person about the destinations `held`'s run met
    /// (`network_approvals`) running `command`, one question each; the retry of `tool(args)` gets
    /// `held` back.
    pub fn ask_domains(
        &self,
        (tool, args): (&str, &Value),
        command: &str,
        held: ToolResult,
        ttl: Duration,
    ) -> InputRequiredResult {
        let nonce = self.fresh_nonce();
        let mut requests = InputRequests::new();
        let mut domains = Vec::new();
        for approval in held.network_approvals.iter().flatten() {
            let key = format!("{DOMAIN_KEY_PREFIX}{}", approval.short_id);
            let question = domain_questions::request(approval, command);
            requests.insert(key.clone(), InputRequest::Elicitation(question));
            domains.push((key, approval.id.clone()));
        }
        let sealed = Sealed {
            approval: String::new(),
            nonce: nonce.clone(),
            domains,
        };
        let state = self.seal(tool, args, &sealed, &requests, ttl);
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(nonce, held);
        InputRequiredResult::new(Some(requests), Some(state))
    }

    /// `sealed` as a state bound to `tool(args)`, its nonce redeemable within `ttl` and asking
    /// `question`; expired nonces and their held results are dropped.
    fn seal(
        &self,
        tool: &str,
        args: &Value,
        sealed: &Sealed,
        question: &InputRequests,
        ttl: Duration,
    ) -> String {
        let payload = serde_json::to_vec(sealed).expect("strings serialize");
        let bound = call_digest(tool, args);
        let state = self
            .codec
            .seal_with(&payload, &SealOptions::new().associated_data(&bound).ttl(ttl));
        let mut outstanding = self.lock();
        let now = Instant::now();
        outstanding.retain(|_, issued| issued.until > now);
        let issued = Outstanding {
            until: now + ttl,
            question: question.clone(),
        };
        outstanding.insert(sealed.nonce.clone(), issued);
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|nonce, _| outstanding.contains_key(nonce));
        state
    }

    /// What a retry of `tool(args)` resumes, once per state. A retry whose state is good but that
    /// carries no usable answer is refused with [`Refused::NoAnswer`] and does not spend the
    /// state: the client may retry with the answer (see [`ApprovalRounds::ask_again`]).
    pub fn resume(
        &self,
        tool: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<Resumed, Refused> {
        let sealed = self.open(tool, args, state)?;
        self.redeemable(&sealed.nonce)?;
        let asks_domains = !sealed.domains.is_empty();
        let command_decision = if asks_domains {
            responses.ok_or_else(|| Refused::NoAnswer("no inputResponses".to_owned()))?;
            None
        } else {
            Some(decision_in(responses)?)
        };
        // Spent only now, with the answer in hand; of two retries racing, one wins.
        match self.lock().remove(&sealed.nonce) {
            Some(issued) if issued.until > Instant::now() => {}
            _ => return Err(Refused::Replayed),
        }
        let held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&sealed.nonce);
        match (command_decision, held) {
            (Some(decision), _) => Ok(Resumed::Command(sealed.approval, decision)),
            (None, Some(held)) => {
                let responses = responses.ok_or_else(|| Refused::NoAnswer("no inputResponses".to_owned()))?;
                let answers = sealed
                    .domains
                    .into_iter()
                    .map(|(key, id)| (id, domain_answer(responses.get(&key), &key)))
                    .collect();
                Ok(Resumed::Domains {
                    held: Box::new(held),
                    answers,
                })
            }
            (None, None) => Err(Refused::Replayed),
        }
    }

    /// The question of a state that is still redeemable, with that same state, for a retry that
    /// came without an answer; `None` when the state is not (or no longer) good for `tool(args)`.
    pub fn ask_again(&self, tool: &str, args: &Value, state: Option<&str>) -> Option<InputRequiredResult> {
        let sealed = self.open(tool, args, state).ok()?;
        let question = self.redeemable(&sealed.nonce).ok()?;
        Some(InputRequiredResult::new(Some(question), state.map(str::to_owned)))
    }

    /// The contents of `state`, when this process sealed it for `tool(args)` and it has not expired.
    fn open(&self, tool: &str, args: &Value, state: Option<&str>) -> Result<Sealed, Refused> {
        let state = state.ok_or_else(|| Refused::Invalid("no request state".to_owned()))?;
        let bound = call_digest(tool, args);
        let payload = self
            .codec
            .open_with(state, &bound)
            .map_err(|e| Refused::Invalid(e.to_string()))?;
        serde_json::from_slice(&payload).map_err(|e| Refused::Invalid(e.to_string()))
    }

    /// The question of nonce `nonce` while it may still be redeemed.
    fn redeemable(&self, nonce: &str) -> Result<InputRequests, Refused> {
        match self.lock().get(nonce) {
            Some(issued) if issued.until > Instant::now() => Ok(issued.question.clone()),
            _ => Err(Refused::Replayed),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Outstanding>> {
        self.outstanding
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A nonce never issued before by this process. It only has to be unique, not secret: it is
    /// sealed, so a client cannot choose one.
    fn fresh_nonce(&self) -> String {
        self.issued.fetch_add(1, Ordering::Relaxed).to_string()
    }
}

/// The person's decision in a retry's `inputResponses`.
fn decision_in(responses: Option<&InputResponses>) -> Result<ApprovalDecision, Refused> {
    let answer = responses
        .and_then(|r| r.get(INPUT_KEY))
        .ok_or_else(|| Refused::NoAnswer(format!("no `{INPUT_KEY}` in inputResponses")))?;
    let result: ElicitResult =
        serde_json::from_value(answer.clone()).map_err(|e| Refused::NoAnswer(e.to_string()))?;
    match elicit::answer_of(&result) {
        Answer::Decided(decision) => Ok(decision),
        Answer::Unanswered(why) => Err(Refused::NoAnswer(why)),
    }
}

/// The answer under `key` to a destination question.
fn domain_answer(response: Option<&Value>, key: &str) -> Answer {
    let Some(response) = response else {
        return Answer::Unanswered(format!("no `{key}` in inputResponses"));
    };
    match serde_json::from_value::<ElicitResult>(response.clone()) {
        Ok(result) => elicit::answer_of(&result),
        Err(e) => Answer::Unanswered(e.to_string()),
    }
}

/// SHA-256 of the tool name and its arguments (serde_json writes object keys sorted, so the same
/// arguments always give the same digest).
fn call_digest(tool: &str, args: &Value) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    hasher.update(serde_json::to_vec(args).expect("a JSON value serializes"));
    hasher.finalize().to_vec()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn approval() -> Approval {
        Approval {
            command: "rm -rf build".into(),
            cwd: "/work/p".into(),
            rule: "dangerous".into(),
            reason: "recursive delete".into(),
            segments_missing: Vec::new(),
            always_approvable: false,
            id: "0123456789abcdef".into(),
            short_id: "01234567".into(),
            host: "local".into(),
            expires_at: "2030-01-01T00:00:00Z".into(),
        }
    }

    fn allow_once() -> InputResponses {
        let mut r = InputResponses::new();
        r.insert(
            INPUT_KEY.to_owned(),
            json!({"action": "accept", "content": {"decision": "allow-once"}}),
        );
        r
    }

    fn state_of(asked: &InputRequiredResult) -> String {
        asked.request_state.clone().expect("a state")
    }

    const LONG: Duration = Duration::from_secs(60);

    #[test]
    fn a_state_resumes_its_approval_once() {
        let rounds = ApprovalRounds::new().unwrap();
        let args = json!({"command": "rm -rf build"});
        let asked = rounds.ask("bash", &args, &approval(), LONG);
        assert!(asked.input_requests.as_ref().unwrap().contains_key(INPUT_KEY));
        let state = state_of(&asked);
        let resumed = rounds.resume("bash", &args, Some(&state), Some(&allow_once()));
        assert_eq!(
            resumed,
            Ok(Resumed::Command(
                "0123456789abcdef".to_owned(),
                ApprovalDecision::AllowOnce
            ))
        );
        let again = rounds.resume("bash", &args, Some(&state), Some(&allow_once()));
        assert_eq!(again, Err(Refused::Replayed));
    }

    #[test]
    fn a_state_does_not_resume_a_call_with_other_arguments() {
        let rounds = ApprovalRounds::new().unwrap();
        let asked = rounds.ask("bash", &json!({"command": "rm -rf build"}), &approval(), LONG);
        let other = json!({"command": "rm -rf /"});
        let resumed = rounds.resume("bash", &other, Some(&state_of(&asked)), Some(&allow_once()));
        assert!(matches!(resumed, Err(Refused::Invalid(_))), "{resumed:?}");
    }

    #[test]
    fn a_state_from_another_key_or_altered_is_refused() {
        let args = json!({"command": "rm -rf build"});
        let theirs = ApprovalRounds::with_key(&[7u8; 32]).unwrap();
        let forged = state_of(&theirs.ask("bash", &args, &approval(), LONG));
        let ours = ApprovalRounds::new().unwrap();
        let resumed = ours.resume("bash", &args, Some(&forged), Some(&allow_once()));
        assert!(matches!(resumed, Err(Refused::Invalid(_))), "{resumed:?}");

        let genuine = state_of(&ours.ask("bash", &args, &approval(), LONG));
        let mut altered = genuine.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        let resumed = ours.resume("bash", &args, Some(&altered), Some(&allow_once()));
        assert!(matches!(resumed, Err(Refused::Invalid(_))), "{resumed:?}");
        // The genuine state is still good after the failed attempts.
        assert!(
            ours.resume("bash", &args, Some(&genuine), Some(&allow_once()))
                .is_ok()
        );
    }

    #[test]
    fn a_state_expires() {
        let rounds = ApprovalRounds::new().unwrap();
        let args = json!({"command": "rm -rf build"});
        let state = state_of(&rounds.ask("bash", &args, &approval(), Duration::from_millis(1)));
        std::thread::sleep(Duration::from_millis(20));
        let resumed = rounds.resume("bash", &args, Some(&state), Some(&allow_once()));
        assert!(resumed.is_err(), "{resumed:?}");
    }

    #[test]
    fn a_retry_without_an_answer_is_refused_without_spending_the_state() {
        let rounds = ApprovalRounds::new().unwrap();
        let args = json!({"command": "rm -rf build"});
        let state = state_of(&rounds.ask("bash", &args, &approval(), LONG));
        let resumed = rounds.resume("bash", &args, Some(&state), None);
        assert!(matches!(resumed, Err(Refused::NoAnswer(_))), "{resumed:?}");
        let again = rounds
            .ask_again("bash", &args, Some(&state))
            .expect("asked again");
        assert_eq!(again.request_state.as_deref(), Some(state.as_str()));
        assert!(again.input_requests.unwrap().contains_key(INPUT_KEY));
        assert!(
            rounds
                .ask_again("bash", &json!({"command": "ls"}), Some(&state))
                .is_none()
        );
        assert!(matches!(
            rounds.resume("bash", &args, None, Some(&allow_once())),
            Err(Refused::Invalid(_))
        ));
        // The state is still good for the answered retry, and then spent.
        assert!(
            rounds
                .resume("bash", &args, Some(&state), Some(&allow_once()))
                .is_ok()
        );
        assert!(rounds.ask_again("bash", &args, Some(&state)).is_none());
    }

    #[test]
    fn declining_denies() {
        let rounds = ApprovalRounds::new().unwrap();
        let args = json!({"command": "rm -rf build"});
        let state = state_of(&rounds.ask("bash", &args, &approval(), LONG));
        let mut declined = InputResponses::new();
        declined.insert(INPUT_KEY.to_owned(), json!({"action": "decline"}));
        let resumed = rounds.resume("bash", &args, Some(&state), Some(&declined));
        assert_eq!(
            resumed,
            Ok(Resumed::Command(
                "0123456789abcdef".to_owned(),
                ApprovalDecision::Deny
            ))
        );
    }
}
