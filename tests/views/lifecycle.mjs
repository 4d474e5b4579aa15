// A view's life in headless Chromium: a download offer, an approved link, display modes as
// declared, a second tab taking over,
// self-navigation dropped (and Reload), the app's own teardown closing the page and clearing
// the storage the views share. Prints one JSON line of observations for
// src/views/server/browser_tests.rs.
// With THEME, it then waits (60 s) for the last page to be told that theme by
// host-context-changed, which the caller brings about (config and `calyx reload-config`).
// usage: node lifecycle.mjs URL_A PLAYWRIGHT_CORE_DIR CHROMIUM_PATH URL_B [THEME]
import { readFileSync } from "node:fs";
import { launch } from "./launch.mjs";

const [urlA, playwrightDir, chromiumPath, urlB, theme] = process.argv.slice(2);
const out = {};
let browser = null;
const WAIT = { timeout: 20000 };
const inner = (page) => page.frameLocator("#frame-box iframe").frameLocator("iframe");
const text = (locator) => locator.innerText();

async function open(url) {
  const page = await browser.context.newPage();
  page.on("console", (m) => console.error("console", m.type(), m.text()));
  await page.goto(url, { waitUntil: "load", ...WAIT });
  await inner(page).locator("#ready").filter({ hasText: "ready" }).waitFor(WAIT);
  return page;
}

try {
  browser = await launch(playwrightDir, chromiumPath);
  const first = await open(urlA);
  out.firstStored = await text(inner(first).locator("#stored"));

  // A download offer: the page's bar, Save gives a browser download, the view gets {}.
  await inner(first).locator("#download").click();
  await first.locator("#download-bar").waitFor({ state: "visible", ...WAIT });
  out.downloadText = await text(first.locator("#download-text"));
  const [download] = await Promise.all([
    first.waitForEvent("download", WAIT),
    first.locator("#download-save").click(),
  ]);
  out.downloadName = download.suggestedFilename();
  out.downloadBody = readFileSync(await download.path(), "utf8");
  await inner(first).locator("#downloaded").filter({ hasText: /\S/ }).waitFor(WAIT);
  out.downloaded = await text(inner(first).locator("#downloaded"));

  // An approved link: a new tab with it, or (popup blocked) the page's link bar.
  const popups = [];
  browser.context.on("page", (p) => popups.push(p));
  await inner(first).locator("#link").click();
  await inner(first).locator("#linked").filter({ hasText: /\S/ }).waitFor(WAIT);
  out.linked = await text(inner(first).locator("#linked"));
  await first.waitForFunction(() => !document.getElementById("link-bar").hidden, null, { timeout: 3000 }).catch(() => {});
  for (const p of popups) { await p.waitForURL(/opened/, { timeout: 5000 }).catch(() => {}); }
  out.popupUrls = popups.map((p) => p.url());
  out.linkBar = (await first.locator("#link-bar").isVisible()) ? await first.locator("#link-anchor").getAttribute("href") : null;
  for (const p of popups) { await p.close(); }

  // Display modes: fullscreen is declared, pip is not.
  await inner(first).locator("#fullscreen").click();
  await inner(first).locator("#mode").filter({ hasText: "fullscreen" }).waitFor(WAIT);
  await first.locator("#frame-box.fullscreen").waitFor(WAIT);
  out.fullscreen = await text(inner(first).locator("#mode"));
  await inner(first).locator("#pip").click();
  await inner(first).locator("#mode").filter({ hasText: "after pip" }).waitFor(WAIT);
  out.afterPip = await text(inner(first).locator("#mode"));
  out.pipBox = await first.locator("#frame-box.pip").count();

  // A second tab takes over.
  const second = await open(urlA);
  await first.locator("#notice-text").filter({ hasText: /\S/ }).waitFor(WAIT);
  out.takenOver = await text(first.locator("#notice-text"));
  await first.waitForFunction(() => !document.querySelector("#frame-box iframe"), null, WAIT);
  out.firstFrames = await first.locator("#frame-box iframe").count();

  // Self-navigation is dropped; Reload brings the view back with its input replayed.
  await inner(second).locator("#navigate").click();
  await second.locator("#notice-text").filter({ hasText: /\S/ }).waitFor(WAIT);
  out.navigated = await text(second.locator("#notice-text"));
  out.reloadShown = await second.locator("#reload").isVisible();
  await second.locator("#reload").click();
  await inner(second).locator("#ready").filter({ hasText: "ready" }).waitFor(WAIT);
  await inner(second).locator("#input").filter({ hasText: /\S/ }).waitFor(WAIT);
  out.inputAfterReload = await text(inner(second).locator("#input"));

  // Another view opened meanwhile shares the sandbox origin's storage (no Clear-Site-Data while
  // a view page is open), so it sees what the first left...
  const third = await open(urlB);
  out.sharedStored = await text(inner(third).locator("#stored"));

  // The app asks for teardown: the page says the view was closed.
  await inner(second).locator("#teardown").click();
  await second.locator("#notice-text").filter({ hasText: "closed" }).waitFor(WAIT);
  out.closed = await text(second.locator("#notice-text"));

  // ...and nothing once that view's teardown cleared it.
  await inner(third).locator("#probe").click();
  await inner(third).locator("#probed").filter({ hasText: /\S/ }).waitFor(WAIT);
  out.afterTeardown = await text(inner(third).locator("#probed"));

  if (theme) {
    await inner(third).locator("#theme").filter({ hasText: theme }).waitFor({ timeout: 60000 });
    out.theme = await text(inner(third).locator("#theme"));
  }
} catch (e) {
  out.error = String(e);
} finally {
  if (browser) { await browser.done(); }
}
console.log(JSON.stringify(out));
