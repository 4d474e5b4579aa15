// A page of another origin frames a view's sandbox page and posts it a document: the sandbox
// must neither tell that page it is ready nor write the document. Prints one JSON line for
// src/views/server/browser_tests.rs.
// usage: node foreign.mjs FOREIGN_URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
import { launch } from "./launch.mjs";

const [url, playwrightDir, chromiumPath] = process.argv.slice(2);
const out = {};
let browser = null;
try {
  browser = await launch(playwrightDir, chromiumPath);
  const page = browser.context.pages()[0] || (await browser.context.newPage());
  page.on("console", (m) => console.error("console", m.type(), m.text()));
  await page.goto(url, { waitUntil: "load", timeout: 20000 });
  await page.waitForFunction(() => document.title === "posted", null, { timeout: 20000 });
  // Give a (wrongly) accepted document time to be written.
  await page.waitForTimeout(1000);
  out.frames = page.frames().length;
  out.received = await page.locator("#got").innerText();
  out.sandboxText = await page.frameLocator("#s").locator("body").innerText();
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
