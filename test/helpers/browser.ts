/**
 * A real browser for page tests: playwright-core (the driver only, it
 * downloads nothing) with the system's Chromium (Debian `chromium`,
 * /usr/bin/chromium; override with BERNSTEIN_CHROMIUM). Every launch gets a
 * fresh profile in a temp directory and flags that keep Chromium from
 * calling home, so a request the page makes is the page's own.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page, type Request } from "playwright-core";
import { available } from "./require-service.ts";

export const CHROMIUM = process.env.BERNSTEIN_CHROMIUM ?? "/usr/bin/chromium";

/** True when Chromium is here; skips with a message on a dev machine without it, fails in CI (BERNSTEIN_CI_REQUIRE). */
export function chromiumAvailable(): boolean {
  return available("chromium", existsSync(CHROMIUM), `${CHROMIUM} not found (apt-get install -y --no-install-recommends chromium)`);
}

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-quic",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  /** Every request any page of this browser made (the file:// documents the test opened included). */
  requests: Request[];
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Launch Chromium with a fresh profile. Every request is routed: file://
 * documents the test navigates to are served, anything else is aborted
 * (and stays in `requests`, so a test can assert there was none).
 */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "bern-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 1000 },
  });
  const requests: Request[] = [];
  context.on("request", (r) => requests.push(r));
  await context.route("**/*", (route) => (route.request().url().startsWith("file://") ? route.continue() : route.abort()));
  return {
    context,
    requests,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
