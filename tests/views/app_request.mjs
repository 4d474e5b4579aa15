// Opens the view of server-basic-vanillajs's get-time, served by a real calyx server, in
// headless Chromium, types TEXT in the box of BUTTON (`message`: Send Message, `link`: Open
// Link) and presses it: calyx asks the user in its approval panel (the test answers). Prints
// one JSON line with what the app logged of the answer ("Message accepted", "Open link request
// accepted", their "rejected", or the send error; the app gives up on a message after 5 s).
// usage: node app_request.mjs URL PLAYWRIGHT_CORE_DIR CHROMIUM_PATH BUTTON TEXT
import { launch } from "./launch.mjs";

const [url, playwrightDir, chromiumPath, button, text] = process.argv.slice(2);
const [box, press] = button === "link"
  ? ["#link-url", "#open-link-btn"]
  : ["#message-text", "#send-message-btn"];
const out = {};
let browser = null;
try {
  browser = await launch(playwrightDir, chromiumPath);
  const page = browser.context.pages()[0] || (await browser.context.newPage());
  const answers = [];
  page.on("console", (m) => {
    const text = m.text();
    console.error("console", m.type(), text);
    if (/Message (accepted|rejected)|Message send error|Open link request (accepted|rejected)/.test(text)) answers.push(text);
  });
  const response = await page.goto(url, { waitUntil: "load", timeout: 20000 });
  out.http = response ? response.status() : null;
  const inner = page.frameLocator("#frame-box iframe").frameLocator("iframe");
  await inner
    .locator("#server-time")
    .filter({ hasText: /\d{4}-\d\d-\d\dT/ })
    .waitFor({ timeout: 20000 });
  await inner.locator(box).fill(text);
  await inner.locator(press).click();
  out.clicked = true;
  const deadline = Date.now() + 20000;
  while (answers.length === 0 && Date.now() < deadline) {
    await page.waitForTimeout(50);
  }
  out.answer = answers[0] || null;
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
