// Renders sightline.show()'s HTML the way a notebook does: inside a page of another origin (a
// second 127.0.0.1 server standing in for Jupyter), in headless Chromium, with the e2e tests'
// guards (no request leaves 127.0.0.1, no console or page error, no failed request). Prints
// "ready" with the element's text once <sightline-trace> reaches state=ready; exits 1 otherwise.
//   node python/tests/show_render.mjs SNIPPET.html
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createTestContext, launchBrowser } from "../../tests/e2e/lib.mjs";

const snippet = readFileSync(process.argv[2], "utf8");
const notebook = createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end(`<!doctype html><html><body><div class="output">${snippet}</div></body></html>`);
});
await new Promise((ok) => notebook.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${notebook.address().port}/notebook.html`;

const browser = await launchBrowser();
let code = 1;
try {
  const ctx = await createTestContext(browser, { baseUrl: url, testId: "show" });
  await ctx.page.goto(url);
  const el = ctx.page.locator("sightline-trace");
  await ctx.page.waitForFunction(
    () => ["ready", "error"].includes(document.querySelector("sightline-trace")?.getAttribute("state")),
    null,
    { timeout: 60000 },
  );
  const state = await el.getAttribute("state");
  const text = await el.evaluate((e) => e.shadowRoot?.textContent ?? "");
  const problems = ctx.problems();
  if (state !== "ready") console.log(`state ${state}: ${text.slice(0, 500)}`);
  else if (problems.length) console.log(`problems: ${JSON.stringify(problems)}`);
  else {
    console.log(`ready ${text.replace(/\s+/g, " ").slice(0, 300)}`);
    code = 0;
  }
} catch (e) {
  console.log(`failed: ${e.stack || e}`);
} finally {
  await browser.close();
  notebook.close();
}
process.exit(code);
