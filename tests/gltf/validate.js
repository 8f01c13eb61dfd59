#!/usr/bin/env node
// Runs the Khronos glTF validator over each .glb named on the command line. Prints one
// line per file (errors, warnings, infos) and every error message; exits 1 when any
// file has an error (or cannot be read), 0 otherwise. Warnings and infos are shown only.
'use strict';
const fs = require('fs');
const path = require('path');
const validator = require('gltf-validator');

async function check(file) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0,
    writeTimestamp: false,
  });
  const n = report.issues;
  console.log(`${file}: ${n.numErrors} errors, ${n.numWarnings} warnings, ${n.numInfos} infos`);
  for (const m of n.messages) {
    if (m.severity === 0 || process.env.VERBOSE)
      console.log(`  [${m.severity}] ${m.code} ${m.pointer || ''}: ${m.message}`);
  }
  return n.numErrors === 0;
}

(async () => {
  let ok = true;
  if (process.argv.length < 3) {
    console.error('usage: validate.js FILE.glb...');
    process.exit(2);
  }
  for (const f of process.argv.slice(2)) {
    try {
      if (!(await check(f))) ok = false;
    } catch (e) {
      console.log(`${f}: cannot validate: ${e}`);
      ok = false;
    }
  }
  process.exit(ok ? 0 : 1);
})();
