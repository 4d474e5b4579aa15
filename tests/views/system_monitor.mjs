// Opens the view of server-system-monitor's get-system-info, served by a real calyx server,
// in headless Chromium: prints one JSON line with #memory-percent before and after the app's
// poll toggle (its app-only poll-system-stats tool, called through calyx).
// usage: node system_monitor.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
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
  const memory = inner.locator("#memory-percent");
  await memory.waitFor({ timeout: 20000 });
  out.before = await memory.innerText();
  await inner.locator("#poll-toggle-btn").click();
  const deadline = Date.now() + 20000;
  out.after = out.before;
  while (out.after.includes("--") && Date.now() < deadline) {
    await page.waitForTimeout(200);
    out.after = await memory.innerText();
  }
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
