//! The examples shown after each subcommand's `--help`: one place, so every subcommand has some and
//! they read alike.

/// `shellgate` itself.
pub const MAIN: &str = "\
Examples:
  shellgate run 'cargo test 2>&1 | tail -n 50'
  shellgate run --json -- ls -la
  shellgate mcp                      # register this command with an MCP client
  shellgate jobs list                # the jobs of the running rpc/mcp server
  shellgate completions bash > ~/.local/share/bash-completion/completions/shellgate";

/// `shellgate run`.
pub const RUN: &str = "\
Options come before the command: everything from the first command word on is the command, and an
unknown option is an error. Put `--` before a command that starts with `-`.

On a terminal the output streams live under a spinner, then the last 20 lines stay on screen with a
`Wall | Timeout | Artifact | Exit` footer; elsewhere the model text is printed. Colours only on a
terminal, never when NO_COLOR is set.

Examples:
  shellgate run 'echo hi'
  shellgate run echo hi                        # words are joined with spaces
  shellgate run --timeout 600 -- make -j4 test
  shellgate run --json 'git status --short'
  shellgate run --cwd /srv/app --env RUST_LOG=debug 'cargo run'
  shellgate run --full 'seq 1 100'             # every line at the end, not the last 20
  shellgate run --sandbox workspace-write -- make test   # writes only in this directory, no network";

/// `shellgate rpc`.
pub const RPC: &str = "\
Examples:
  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bash\",\"params\":{\"command\":\"echo hi\"}}' | shellgate rpc
  shellgate rpc --config ./shellgate.toml";

/// `shellgate mcp`.
pub const MCP: &str = "\
Examples:
  shellgate mcp
  claude mcp add shellgate -- shellgate mcp
  RUST_LOG=debug shellgate mcp 2>mcp.log";

/// `shellgate artifact`.
pub const ARTIFACT: &str = "\
Examples:
  shellgate artifact list
  shellgate artifact read artifact://12 --lines 100:200
  shellgate artifact read 12 --grep 'error\\['";

/// `shellgate artifact read`.
pub const ARTIFACT_READ: &str = "\
Examples:
  shellgate artifact read artifact://12
  shellgate artifact read 12 --lines 9990:
  shellgate artifact read 12 --bytes 0:4096
  shellgate artifact read 12 --grep 'panicked at'";

/// `shellgate artifact list`.
pub const ARTIFACT_LIST: &str = "\
Examples:
  shellgate artifact list
  shellgate artifact list --json
  shellgate artifact list --dir /tmp/artifacts";

/// `shellgate config`.
pub const CONFIG: &str = "\
Examples:
  shellgate config
  shellgate config --sources
  shellgate config --config ./shellgate.toml";

/// `shellgate check`.
pub const CHECK: &str = "\
Examples:
  shellgate check -- 'git status && rm -rf build'
  shellgate check --json -- 'find . -name x -exec rm {} +'
  shellgate check --config policy.toml -- 'cargo test --all'";

/// `shellgate completions`.
pub const COMPLETIONS: &str = "\
Examples:
  shellgate completions bash > ~/.local/share/bash-completion/completions/shellgate
  shellgate completions zsh > \"${fpath[1]}/_shellgate\"
  shellgate completions fish > ~/.config/fish/completions/shellgate.fish";

/// `shellgate jobs`.
pub const JOBS: &str = "\
Talks to the private control socket of a running `shellgate rpc` or `shellgate mcp` server
($XDG_RUNTIME_DIR/shellgate/<pid>.sock, else /tmp/shellgate-<uid>/<pid>.sock). With one server
running it is found by itself; with several, name it with --server PID.

Examples:
  shellgate jobs list
  shellgate jobs log calm-reef --limit 50
  shellgate jobs poll calm-reef --wait-ms 5000
  shellgate jobs kill calm-reef
  shellgate jobs --server 4242 list --json";

/// `shellgate jobs list`.
pub const JOBS_LIST: &str = "\
Examples:
  shellgate jobs list
  shellgate jobs list --json";

/// `shellgate jobs log`.
pub const JOBS_LOG: &str = "\
Examples:
  shellgate jobs log calm-reef
  shellgate jobs log calm-reef --offset 0 --limit 20";

/// `shellgate jobs poll`.
pub const JOBS_POLL: &str = "\
Examples:
  shellgate jobs poll calm-reef
  shellgate jobs poll calm-reef --wait-ms 10000";

/// `shellgate jobs kill`.
pub const JOBS_KILL: &str = "\
Examples:
  shellgate jobs kill calm-reef
  shellgate jobs kill calm-reef --signal SIGTERM";

/// `shellgate approve`.
pub const APPROVE: &str = "\
Reaches the running server through its private control socket (mode 0600 in
$XDG_RUNTIME_DIR/shellgate, else /tmp/shellgate-<uid>), which serves only `process` and `approve`.
allow-always saves the exact argv of each segment that missed a rule in the approvals file.

Examples:
  shellgate approve 1f2e3d4c allow-once
  shellgate approve 1f2e3d4c allow-always --server 4242
  shellgate approve 1f2e3d4c deny";

/// `shellgate approvals`.
pub const APPROVALS: &str = "\
The approvals file is $XDG_CONFIG_HOME/shellgate/approvals.toml (else
~/.config/shellgate/approvals.toml), or [approvals] file, or $SHELLGATE_APPROVALS_FILE.

Examples:
  shellgate approvals list
  shellgate approvals revoke 2
  shellgate approvals revoke 'ls -a'";

pub const TRUST: &str = "\
A project's .shellgate.toml lies where commands can write: until you trust it, only the keys that
make the configuration stricter apply (a stricter security, ask or sandbox mode, more deny rules,
protected paths, redacted names, lower limits, the network off). Trusting records a SHA-256 of the
file as it is now in $XDG_STATE_HOME/shellgate/trusted (else ~/.local/state/shellgate/trusted); any
later change needs trusting again. `shellgate config` names the keys left out.

Examples:
  shellgate trust
  shellgate trust ../other/.shellgate.toml";
