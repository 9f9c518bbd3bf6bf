// Throughput baseline: read a generator's output through a pipe from child_process.spawn, counting bytes
// and lines. Input: the generator script as one argument. Output: {"bytes": B, "lines": L}.
'use strict';
const { spawn } = require('child_process');

const child = spawn('bash', ['-c', process.argv[2]], { stdio: ['ignore', 'pipe', 'inherit'] });
let bytes = 0;
let lines = 0;
child.stdout.on('data', (chunk) => {
  bytes += chunk.length;
  let at = chunk.indexOf(10);
  while (at !== -1) {
    lines++;
    at = chunk.indexOf(10, at + 1);
  }
});
child.on('close', (code) => {
  process.stdout.write(JSON.stringify({ bytes, lines, code }) + '\n');
});
