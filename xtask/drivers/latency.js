// Per-command latency the way TypeScript agents run commands: child_process.spawn('bash', ['-c', cmd]),
// collecting stdout and stderr, timed until 'close'. Input: one JSON argument
// {"commands": [...], "runs": N, "warmup": W}. Output: {"<command>": [microseconds, ...], ...}.
'use strict';
const { spawn } = require('child_process');

const { commands, runs, warmup } = JSON.parse(process.argv[2]);

function once(cmd) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn('bash', ['-c', cmd], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const micros = Number(process.hrtime.bigint() - start) / 1000;
      if (code !== 0) reject(new Error(`${cmd} exited ${code}: ${Buffer.concat(err)}`));
      else resolve(micros);
    });
  });
}

(async () => {
  const result = {};
  for (const cmd of commands) {
    for (let i = 0; i < warmup; i++) await once(cmd);
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await once(cmd));
    result[cmd] = samples;
  }
  process.stdout.write(JSON.stringify(result) + '\n');
})().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
