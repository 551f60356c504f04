// The browser test of scripts/browser: Debian's Chromium, driven by playwright-core, opens
// the host page (served by serve.mjs) once per protocol era, waits for the MCP App in its
// sandboxed iframe to finish the ui/initialize handshake, clicks its Greet button and waits
// for the greeting that the app's tools/call fetched from tern through the host's
// AppBridge. Exit code 0 when every era passes, 1 otherwise.
//
//   node app.test.mjs HOST_URL DEPS_DIR      (DEPS_DIR holds node_modules/playwright-core)
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const [hostUrl, depsDir] = process.argv.slice(2);
if (!hostUrl || !depsDir) {
  console.error("usage: node app.test.mjs HOST_URL DEPS_DIR");
  process.exit(2);
}
const { chromium } = createRequire(path.join(path.resolve(depsDir), "package.json"))("playwright-core");

const EXPECTED = "Hello, browser! (from tern)";
const ERAS = ["2026-07-28", "2025-11-25"];
const STEP_MS = 20_000; // each wait below
const WHOLE_MS = 150_000; // the whole run, browser start and stop included
const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const watchdog = setTimeout(() => {
  console.log(`browser: FAIL: the run took over ${WHOLE_MS / 1000} s`);
  process.exit(1);
}, WHOLE_MS);
watchdog.unref();

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

async function runEra(context, era) {
  const started = Date.now();
  const page = await context.newPage();
  const log = [];
  // The host page's scripts all come from the host's origin; the app's are inline in srcdoc.
  const where = (url) => (url.startsWith(new URL(hostUrl).origin) ? "page" : "frame");
  page.on("console", (m) => log.push(`[${where(m.location().url)} console.${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => log.push(`[pageerror] ${e.stack ?? e.message}`));
  page.on("requestfailed", (r) => log.push(`[requestfailed] ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) log.push(`[http ${r.status()}] ${r.request().method()} ${r.url()}`);
  });
  // The host page gives up (body[data-state=error]) when its own part fails: then no
  // step waits out its timeout.
  const hostFailed = page
    .locator('body[data-state="error"]')
    .waitFor({ timeout: WHOLE_MS })
    .then(() => Promise.reject(new Error("the host page reported an error (see its #status)")));
  hostFailed.catch(() => {}); // observed through the races below
  // Each step bounded; a failure names the step it failed in.
  const step = async (what, action) => {
    try {
      return await Promise.race([action(), hostFailed]);
    } catch (e) {
      throw new Error(`${what}: ${e.message.split("\n")[0]}`);
    }
  };
  try {
    await step("opening the host page", () => page.goto(`${hostUrl}?era=${era}`, { timeout: STEP_MS }));
    const app = page.frameLocator("#app");
    await step("waiting for the app's #greet to be enabled (ui/initialize done)", () =>
      app.locator("#greet:enabled").waitFor({ timeout: STEP_MS }),
    );
    await step("clicking #greet", () => app.locator("#greet").click({ timeout: STEP_MS }));
    const result = app.locator("#result");
    await step(`waiting for the app's #result to contain ${JSON.stringify(EXPECTED)}`, () =>
      result.filter({ hasText: new RegExp(escapeRegExp(EXPECTED)) }).waitFor({ timeout: STEP_MS }),
    );
    // The host's own part: the tool call it makes itself, and the result it sends the app.
    await step("waiting for the host page's state to be ready", () =>
      page.locator('body[data-state="ready"]').waitFor({ timeout: STEP_MS }),
    );
    const negotiated = await page.locator("body").getAttribute("data-protocol-version");
    if (negotiated !== era) throw new Error(`the client negotiated ${negotiated}, not ${era}`);
    const text = (await result.textContent({ timeout: STEP_MS })) ?? "";
    return { ok: true, line: `ok ${era}: the app shows "${text.trim()}" (${Date.now() - started} ms)` };
  } catch (e) {
    const status = await page
      .locator("#status")
      .textContent({ timeout: 2_000 })
      .catch((err) => `(unreadable: ${err.message})`);
    const shown = await page
      .frameLocator("#app")
      .locator("#result")
      .textContent({ timeout: 2_000 })
      .catch(() => "(no app frame)");
    const details = [
      `FAIL ${era}: ${e.message}`,
      `  app #result: ${JSON.stringify(shown)}`,
      "  host #status:",
      ...String(status).trimEnd().split("\n").map((l) => `    ${l}`),
      "  console and network, page and frame:",
      ...(log.length ? log : ["(nothing)"]).map((l) => `    ${l}`),
    ];
    return { ok: false, line: details.join("\n") };
  } finally {
    await page.close().catch(() => {});
  }
}

const userDataDir = mkdtempSync(path.join(tmpdir(), "tern-browser-profile-"));
let results = [];
let version = "?";
try {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: 30_000,
  });
  try {
    version = context.browser()?.version() ?? version;
    for (const era of ERAS) results.push(await runEra(context, era));
  } finally {
    await context.close().catch(() => {});
  }
} catch (e) {
  results.push({ ok: false, line: `FAIL: could not drive ${CHROMIUM}: ${e.message}` });
} finally {
  rmSync(userDataDir, { recursive: true, force: true });
}

for (const r of results) console.log(r.line);
const passed = results.filter((r) => r.ok).length;
const failed = ERAS.length - passed; // an era that did not run (the browser did not start) failed
console.log(`browser: the MCP Apps greeter through AppBridge, in Chromium ${version}`);
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
