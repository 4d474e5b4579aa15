// Opens a calyx view page in headless Chromium (Debian's, driven by playwright-core) and prints
// one JSON line with what the view's inner frame shows, for the Rust test in
// src/views/server/browser_tests.rs to check.
// usage: node browser.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
import { launch } from "./launch.mjs";

const [url, playwrightDir, chromiumPath] = process.argv.slice(2);
const out = {};
let browser = null;
try {
  browser = await launch(playwrightDir, chromiumPath);
  const page = browser.context.pages()[0] || (await browser.context.newPage());
  page.on("console", (m) => console.error("console", m.type(), m.text()));
  const response = await page.goto(url, { waitUntil: "load", timeout: 20000 });
  out.status = response ? response.status() : null;
  const inner = page.frameLocator("#frame-box iframe").frameLocator("iframe");
  for (const id of ["result", "undeclared", "declared"]) {
    await inner.locator("#" + id).filter({ hasText: /\S/ }).waitFor({ timeout: 20000 });
  }
  for (const id of ["status", "input", "result", "declared", "undeclared", "top", "popup"]) {
    out[id] = await inner.locator("#" + id).innerText();
  }
  out.frames = page.frames().map((f) => new URL(f.url()).origin);
  out.ignored = await page.locator("#ignored").innerText();
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
