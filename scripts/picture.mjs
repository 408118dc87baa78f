// The README's picture, taken from the built page: `node scripts/picture.mjs` after
// `trunk build --release`, with the shared fixtures beside the checkout (or SIGHTLINE_FIXTURES).
// Opens HTA's one-rank V100 training trace at 1440x900, draws the steps' critical path and writes
// docs/images/viewer.png.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, openTrace, startStaticServer } from "../tests/e2e/lib.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const fixtures = process.env.SIGHTLINE_FIXTURES || resolve(root, "../shared/fixtures");
const trace = join(fixtures, "real/hta_v100_train_1rank_ns_resolution.pt.trace.json.gz");

const server = await startStaticServer({ root: join(root, "dist") });
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await openTrace(page, server.baseUrl, trace, { analyses: true });
  await page.click("#critical-path");
  await page.waitForSelector("#critical-panel .critical-bar span");
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(root, "docs/images/viewer.png") });
} finally {
  await browser.close();
  await server.close();
}
