// Opens a calyx view page in headless Chromium (Debian's, driven by playwright-core) and prints
// one JSON line with what the view's inner frame shows, for the Rust test in
// src/views/server/browser_tests.rs to check.
// usage: node browser.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, playwrightDir, chromiumPath] = process.argv.slice(2);
const { chromium } = await import(join(playwrightDir, "index.mjs"));
const profile = mkdtempSync(join(tmpdir(), "calyx-view-browser-"));
const out = {};
let browser = null;
try {
  // The profile goes to launchPersistentContext: Playwright refuses --user-data-dir in args.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run",
    ],
  });
  const page = browser.pages()[0] || (await browser.newPage());
  page.on("console", (m) => console.error("console", m.type(), m.text()));
  const response = await page.goto(url, { waitUntil: "load", timeout: 20000 });
  out.status = response ? response.status() : null;
  const inner = page.frameLocator("#frame-box iframe").frameLocator("iframe");
  await inner.locator("#result").filter({ hasText: /\S/ }).waitFor({ timeout: 20000 });
  await inner.locator("#undeclared").filter({ hasText: /\S/ }).waitFor({ timeout: 20000 });
  await inner.locator("#declared").filter({ hasText: /\S/ }).waitFor({ timeout: 20000 });
  for (const id of ["status", "input", "result", "declared", "undeclared", "top"]) {
    out[id] = await inner.locator("#" + id).innerText();
  }
  out.frames = page.frames().map((f) => new URL(f.url()).origin);
  out.ignored = await page.locator("#ignored").innerText();
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.close(); }
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
