// Reads the result directories of scenarios tern runs one by one (extension scenarios
// no --requirements run includes) and holds each to more than report.mjs does: at
// least one check SUCCESS, none FAILURE or WARNING, and none SKIPPED unless its id is
// named as one the protocol version leaves out. Prints one row per scenario; exit code
// 1 when any scenario falls short, or when one of EXPECTED never ran.
//
// usage: node strict.mjs RESULTS_DIR EXPECTED (comma-separated scenarios) [SKIP_OK (comma-separated check ids)]
import fs from 'node:fs';
import path from 'node:path';

const [resultsDir, expectedList, skipList] = process.argv.slice(2);
const expected = expectedList.split(',').filter(Boolean);
const skipOk = new Set((skipList || '').split(',').filter(Boolean));
const stamp = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
const results = new Map();
for (const entry of fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir) : []) {
  const checks = path.join(resultsDir, entry, 'checks.json');
  if (stamp.test(entry) && fs.existsSync(checks)) {
    results.set(entry.replace(stamp, '').replace(/^server-/, ''), JSON.parse(fs.readFileSync(checks, 'utf8')));
  }
}
let failed = false;
for (const scenario of expected) {
  const checks = results.get(scenario);
  let verdict;
  if (!checks) {
    verdict = 'NEVER RAN';
  } else {
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    const skipped = checks.filter((c) => c.status === 'SKIPPED' && !skipOk.has(c.id));
    const passed = checks.filter((c) => c.status === 'SUCCESS');
    if (bad.length) verdict = `FAILED: ${bad.map((c) => `${c.id} (${c.status})`).join(', ')}`;
    else if (skipped.length) verdict = `SKIPPED: ${skipped.map((c) => c.id).join(', ')}`;
    else if (!passed.length) verdict = 'NO CHECK RAN';
    else verdict = `ok (${passed.length} checks)`;
  }
  if (!verdict.startsWith('ok')) failed = true;
  console.log(`  ${scenario.padEnd(40)} ${verdict}`);
}
process.exit(failed ? 1 : 0);
