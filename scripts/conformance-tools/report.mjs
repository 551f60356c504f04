// Reads the conformance harness's result directories and prints one row per scenario.
// Exit code 1 when a required scenario fails (or never ran) and is not an expected
// failure. A scenario passes when none of its checks is FAILURE or WARNING.
//
// HELD_LIST (optional) names scenarios the suite does not score (extensions) that tern
// holds itself to: they count as required.
//
// usage: node report.mjs SIDE RESULTS_DIR REQUIRED_LIST EXPECTED_FAILURES [HELD_LIST]
import fs from 'node:fs';
import path from 'node:path';

const [side, resultsDir, requiredFile, expectedFile, heldFile] = process.argv.slice(2);
const names_in = (file) => fs.readFileSync(file, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
const held = heldFile ? names_in(heldFile) : [];
const required = [...names_in(requiredFile), ...held];
const expected = new Map();
for (const line of fs.readFileSync(expectedFile, 'utf8').split('\n')) {
  const m = line.match(/^\s*([^#\s][^:]*):\s*(.+)$/);
  if (m) expected.set(m[1].trim(), m[2].trim());
}

// Result directories are named <prefix><scenario>-<ISO timestamp>, auth/* nested.
const stamp = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
const results = new Map();
function walk(dir, rel) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const full = path.join(dir, entry.name);
    const name = rel ? `${rel}/${entry.name}` : entry.name;
    const checks = path.join(full, 'checks.json');
    if (stamp.test(entry.name) && fs.existsSync(checks)) {
      let scenario = name.replace(stamp, '');
      if (side === 'server') scenario = scenario.replace(/^server-/, '');
      results.set(scenario, JSON.parse(fs.readFileSync(checks, 'utf8')));
    } else {
      walk(full, name);
    }
  }
}
walk(resultsDir, '');

const rows = [];
let failed = 0;
const names = [...new Set([...required, ...results.keys()])];
for (const name of names) {
  const checks = results.get(name);
  const isRequired = required.includes(name);
  const count = (s) => (checks ?? []).filter((c) => c.status === s).length;
  const [ok, bad, warn] = [count('SUCCESS'), count('FAILURE'), count('WARNING')];
  const passed = checks !== undefined && bad === 0 && warn === 0;
  let verdict = passed ? 'pass' : checks === undefined ? 'NOT RUN' : 'FAIL';
  if (!isRequired) verdict += ' (not scored)';
  else if (!passed && expected.has(name)) verdict = `expected failure: ${expected.get(name)}`;
  else if (!passed) failed++;
  else if (expected.has(name)) verdict += ' (listed as expected failure: remove it)';
  rows.push([name, held.includes(name) ? 'held' : isRequired ? 'yes' : 'no', `${ok}/${bad}/${warn}`, verdict]);
}
const width = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), 8));
const line = (r) => `| ${r.map((c, i) => (i < 3 ? c.padEnd(width[i]) : c)).join(' | ')} |`;
console.log(`\n${side} scenarios (checks passed/failed/warnings):`);
console.log(line(['scenario', 'required', 'checks', 'result']));
console.log(line(['-'.repeat(width[0]), '-'.repeat(width[1]), '-'.repeat(width[2]), '------']));
for (const r of rows) console.log(line(r));
const requiredPassed = required.filter((n) => rows.find((r) => r[0] === n)?.[3] === 'pass').length;
console.log(`${side}: ${requiredPassed}/${required.length} required scenarios pass, ${failed} unexpected failure(s)`);
process.exit(failed === 0 ? 0 : 1);
