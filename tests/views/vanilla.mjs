// Opens the view of server-basic-vanillajs's get-time, served by a real calyx server, in
// headless Chromium: prints one JSON line with the time the view showed from the agent's call
// and the time after its "Get Server Time" button (a second tools/call through calyx), then
// presses "Send Log".
// usage: node vanilla.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
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
  const time = inner.locator("#server-time");
  await time.filter({ hasText: /\d{4}-\d\d-\d\dT/ }).waitFor({ timeout: 20000 });
  out.first = await time.innerText();
  await inner.locator("#get-time-btn").click();
  const deadline = Date.now() + 20000;
  out.second = out.first;
  while (out.second === out.first && Date.now() < deadline) {
    await page.waitForTimeout(100);
    out.second = await time.innerText();
  }
  // Send Log: a notifications/message the view server keeps with the view.
  await inner.locator("#send-log-btn").click();
  await page.waitForTimeout(300);
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
