// Opens a view page a real calyx server serves (the fixture's show_time view) in headless
// Chromium and prints one JSON line with what its inner frame shows, for
// tests/e2e_mcp_view_browser.rs.
// usage: node real_view.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
import { launch } from "./launch.mjs";

const [url, playwrightDir, chromiumPath] = process.argv.slice(2);
const out = {};
let browser = null;
try {
  browser = await launch(playwrightDir, chromiumPath);
  const page = browser.context.pages()[0] || (await browser.context.newPage());
  page.on("console", (m) => console.error("console", m.type(), m.text()));
  const response = await page.goto(url, { waitUntil: "load", timeout: 20000 });
  out.http = response ? response.status() : null;
  const inner = page.frameLocator("#frame-box iframe").frameLocator("iframe");
  await inner.locator("#result").filter({ hasText: /\S/ }).waitFor({ timeout: 20000 });
  for (const id of ["status", "input", "result"]) {
    out[id] = await inner.locator("#" + id).innerText();
  }
  out.frames = page.frames().map((f) => new URL(f.url()).origin);
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
