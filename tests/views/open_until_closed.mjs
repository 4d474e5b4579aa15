// Opens a view page a real calyx server serves in headless Chromium and keeps it open until a
// line `close` arrives on stdin; then closes the tab (the page's event stream ends) and exits.
// Prints `{"opened": ...}` once the app's inner frame has a body, `{"closed": true}` after the
// tab closed, or `{"error": ...}`. For tests/e2e_mcp_view_budget.rs.
// usage: node open_until_closed.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
import { createInterface } from "node:readline";
import { launch } from "./launch.mjs";

const [url, playwrightDir, chromiumPath] = process.argv.slice(2);
let browser = null;
try {
  browser = await launch(playwrightDir, chromiumPath);
  const page = browser.context.pages()[0] || (await browser.context.newPage());
  page.on("console", (m) => console.error("console", m.type(), m.text()));
  const response = await page.goto(url, { waitUntil: "load", timeout: 20000 });
  const inner = page.frameLocator("#frame-box iframe").frameLocator("iframe");
  await inner.locator("body *").first().waitFor({ timeout: 20000 });
  console.log(JSON.stringify({ opened: response ? response.status() : null }));
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === "close") {
      break;
    }
  }
  await page.close();
  console.log(JSON.stringify({ closed: true }));
} catch (e) {
  console.log(JSON.stringify({ error: String(e) }));
} finally {
  if (browser) { await browser.done(); }
}
