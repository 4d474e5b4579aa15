// Launches Debian's Chromium headless through playwright-core with a throwaway profile, with
// the flags the browser tests use. Returns {context, done}; done() closes and cleans.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function launch(playwrightDir, chromiumPath) {
  const { chromium } = await import(join(playwrightDir, "index.mjs"));
  const profile = mkdtempSync(join(tmpdir(), "calyx-view-browser-"));
  // The profile goes to launchPersistentContext: Playwright refuses --user-data-dir in args.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run",
    ],
  });
  return {
    context,
    done: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
