// Opens every review page the Rust test wrote (its manifest is argv[2]) in
// headless Chromium through playwright-core, and asserts what a person sees:
// - every page: no script element, no event-handler attribute, no
//   javascript: link, the CSP meta tag, nothing requested but the page
//   itself, no console error, no horizontal overflow, no serious or
//   critical axe-core violation (see axeScope for the two big pages);
// - a catalogue page: the verdict text (Accepted, or Refused with the rule
//   the catalogue expects); what broke the rule marked (the phrase in the
//   answer text for a claimed effect, an unclaimed fact or a claim's
//   evidence; else the claim, trace entry, error path or seal); where claims are marked, focusing the first
//   claim shows the evidence it cites and activating it goes to its
//   details, which link to the evidence; a screenshot of the page;
// - the keyboard path on grounded-job-status: Tab reaches a claim, Enter
//   opens its details, Tab reaches its evidence, Enter opens the evidence,
//   which links to its trace entry;
// - the index: one row per page, and a link opens a review;
// - the hostile page: the window canary stays unset, the hostile strings
//   are shown as text, bidirectional overrides are shown as [U+202E],
//   1 MiB strings are folded and "Show all" reveals them;
// - the 1,000-entry page: all entries are there; its load time is printed.
// Exits 1 listing every failed check.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const modules = process.env.REVIEW_NODE_MODULES;
const { chromium } = require(path.join(modules, 'playwright-core'));
const axeSource = fs.readFileSync(path.join(modules, 'axe-core', 'axe.min.js'), 'utf8');
const manifestPath = process.argv[2];
const pagesDir = path.dirname(manifestPath);
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
const screenshots = process.env.REVIEW_SCREENSHOTS;
const CANARY = '__harmoniaCanary';

const failures = [];
let checks = 0;
function check(ok, where, what) {
  checks += 1;
  if (!ok) failures.push(`${where}: ${what}`);
}

async function open(context, file) {
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  page.on('pageerror', (error) => errors.push(String(error)));
  const url = 'file://' + path.join(pagesDir, file);
  const started = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  const loadMs = Date.now() - started;
  return { page, requests, errors, url, loadMs };
}

// What every page must hold, whatever it shows.
async function safe(where, opened) {
  const { page } = opened;
  // Give any handler that slipped through (an image's onerror) a moment to fire.
  await page.waitForTimeout(50);
  const facts = await page.evaluate((canary) => ({
    canary: typeof window[canary],
    scripts: document.querySelectorAll('script').length,
    handlers: [...document.querySelectorAll('*')].filter((element) =>
      [...element.attributes].some((attribute) => attribute.name.toLowerCase().startsWith('on'))).length,
    jsLinks: [...document.querySelectorAll('[href],[src],[action]')].filter((element) =>
      /^\s*javascript:/i.test(element.getAttribute('href') || element.getAttribute('src') || element.getAttribute('action') || '')).length,
    csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content || '',
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  }), CANARY);
  check(facts.canary === 'undefined', where, `a script ran: window.${CANARY} is ${facts.canary}`);
  check(facts.scripts === 0, where, `${facts.scripts} script elements`);
  check(facts.handlers === 0, where, `${facts.handlers} elements carry event-handler attributes`);
  check(facts.jsLinks === 0, where, `${facts.jsLinks} javascript: URLs`);
  check(facts.csp.startsWith("default-src 'none'"), where, `CSP meta tag is "${facts.csp}"`);
  check(facts.overflow <= 1, where, `the page overflows sideways by ${facts.overflow}px (a long string does not wrap)`);
  const others = opened.requests.filter((url) => url !== opened.url);
  check(others.length === 0, where, `network requests: ${others.slice(0, 3).join(', ')}`);
  check(opened.errors.length === 0, where, `console errors: ${opened.errors.slice(0, 3).join(' | ')}`);
}

// The catalogue pages and the index get every axe rule on the whole page.
// The two big pages share their stylesheet and structure with those, and
// axe's colour rules take a minute on each of them here (1 MiB text nodes;
// 30,000 elements): the hostile page is checked without the two colour
// rules, the 1,000-entry page (there to time) not at all.
function axeScope(row) {
  if (row.kind === 'thousand') return null;
  if (row.kind === 'hostile') {
    return { rules: { 'color-contrast': { enabled: false }, 'link-in-text-block': { enabled: false } } };
  }
  return {};
}

async function accessible(where, page, row) {
  const scope = axeScope(row);
  if (scope === null) return;
  const started = Date.now();
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async (options) => {
    const results = await window.axe.run(document, Object.assign({ resultTypes: ['violations'], preload: false }, options));
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.impact}) at ${violation.nodes.slice(0, 2).map((node) => node.target.join(' ')).join('; ')}`);
  }, scope);
  check(violations.length === 0, where, `axe-core: ${violations.join(' | ')}`);
  if (process.env.REVIEW_TIMINGS) console.log(`${where}: axe-core in ${Date.now() - started} ms`);
}

async function verdict(where, page, row) {
  const text = await page.locator('#verdict').innerText();
  if (row.accepted) {
    check(/Accepted/.test(text), where, `verdict reads "${text.slice(0, 80)}", not Accepted`);
  } else {
    check(/Refused/.test(text) && text.includes(row.rule), where, `verdict reads "${text.slice(0, 120)}", not Refused with ${row.rule}`);
  }
  const box = await page.locator('#verdict').boundingBox();
  check(box && box.y < 900, where, 'the verdict is not in the first screen');
}

// Rules whose phrase is marked in the answer text, and rules with no
// place to mark (the answer's shape; a trace without a call).
const IN_TEXT = ['mutation_claim', 'unclaimed_fact', 'unknown_evidence', 'evidence_not_displayed',
  'record_claim_without_record_evidence', 'mock_evidence_in_submission'];
const NOWHERE = ['answer_schema', 'no_tool_call'];

async function fault(where, page, row) {
  if (row.accepted || NOWHERE.includes(row.rule)) return;
  const marked = page.locator('#fault, .at-fault');
  check(await marked.count() > 0 && await marked.first().isVisible(), where, `nothing is marked where ${row.rule} broke`);
  if (IN_TEXT.includes(row.rule)) {
    const phrase = page.locator('.answer-text mark#fault');
    check(await phrase.count() === 1, where, `the phrase that broke ${row.rule} is not marked in the answer`);
    if (await phrase.count() === 1) {
      check((await phrase.innerText()).includes(row.rule), where, `the marked phrase does not name ${row.rule}`);
    }
  }
}

async function claims(where, page, row) {
  if (!row.claimsMarked) return;
  const claim = page.locator('a.claim#claim-1');
  check(await claim.count() === 1 && await claim.isVisible(), where, 'claim 1 is not highlighted in the answer');
  const tip = page.locator('#claim-1-tip');
  check(!(await tip.isVisible()), where, "claim 1's evidence tip shows before the claim is focused");
  await claim.focus();
  const id = row.firstClaimIds[0];
  check(await tip.isVisible(), where, "focusing claim 1 does not show the evidence it cites");
  check((await tip.innerText()).includes(id), where, `claim 1's tip does not name ${id}`);
  await page.mouse.move(0, 0);
  await claim.hover();
  check(await tip.isVisible(), where, 'hovering claim 1 does not show its evidence');
  await claim.press('Enter');
  await page.waitForFunction(() => location.hash === '#claim-1-detail');
  const detail = page.locator('#claim-1-detail');
  check(await detail.isVisible(), where, "activating claim 1 does not reveal its details");
  check((await detail.innerText()).includes(id), where, `claim 1's details do not show ${id}`);
  check(await detail.locator('a[href^="#evidence-"]').count() > 0, where, "claim 1's details do not link to evidence");
}

// Tab from the top to the first claim, Enter, Tab to its evidence, Enter.
async function keyboard(where, page) {
  await page.goto(page.url().split('#')[0]);
  let onClaim = false;
  for (let presses = 0; presses < 25 && !onClaim; presses += 1) {
    await page.keyboard.press('Tab');
    onClaim = await page.evaluate(() => document.activeElement.matches('a.claim'));
  }
  check(onClaim, where, 'Tab never reaches a claim');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash.endsWith('-detail'));
  let onEvidence = false;
  for (let presses = 0; presses < 4 && !onEvidence; presses += 1) {
    await page.keyboard.press('Tab');
    onEvidence = await page.evaluate(() => document.activeElement.matches('a[href^="#evidence-"]'));
  }
  check(onEvidence, where, "Tab from a claim's details never reaches its evidence");
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash.startsWith('#evidence-'));
  const card = page.locator(await page.evaluate(() => location.hash));
  check(await card.locator('a[href^="#entry-"]').count() > 0, where, 'the evidence does not link to its trace entry');
}

async function hostile(where, page, row) {
  const heading = await page.locator('h1').textContent();
  check(heading.includes(`<script>window.${CANARY}='title'</script>`), where, 'the hostile title is not shown as text');
  const body = await page.locator('body').textContent();
  for (const place of ['answer', 'args', 'source', 'target', 'tool-name', 'note']) {
    const markup = `<img src=x onerror="window.${CANARY}='${place}-img'">`;
    // Arguments are shown as JSON, so their quotes are JSON-escaped.
    const shown = place === 'args' ? JSON.stringify(markup).slice(1, -1) : markup;
    check(body.includes(shown), where, `the hostile ${place} is not shown as text`);
  }
  check(body.includes(`javascript:window.${CANARY}='reference'`), where, 'the javascript: reference is not shown as text');
  check(await page.locator('.cc', { hasText: '[U+202E]' }).count() > 0, where, 'the right-to-left override is not shown');
  const summaries = page.locator('details.whole > summary', { hasText: /Show all [\d,]+ characters/ });
  check(await summaries.count() >= 4, where, `${await summaries.count()} long strings are folded, expected the title, claim, arguments and messages`);
  const claim = page.locator('#claim-2-detail details.whole');
  await claim.locator('summary').click();
  const whole = await claim.locator('.text').textContent();
  check(whole.length >= row.hugeChars, where, `"Show all" reveals ${whole.length} characters of the 1 MiB claim`);
  check(await claim.locator('.text').isVisible(), where, 'the whole claim is not visible once opened');
}

async function main() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'harmonia-review-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.REVIEW_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  try {
    for (const row of manifest) {
      const where = row.file;
      const pageStarted = Date.now();
      const opened = await open(context, row.file);
      const { page } = opened;
      try {
        await safe(where, opened);
        if (process.env.REVIEW_TIMINGS) console.log(`${where}: loaded and safe after ${Date.now() - pageStarted} ms`);
        if (row.kind === 'case' || row.kind === 'hostile' || row.kind === 'thousand') {
          await verdict(where, page, row);
          await fault(where, page, row);
          await claims(where, page, row);
        }
        if (row.kind === 'case' && screenshots) {
          await page.goto(opened.url);
          await page.screenshot({ path: path.join(screenshots, `${row.name}.png`), fullPage: true });
        }
        if (row.name === 'grounded-job-status') await keyboard(where, page);
        if (row.kind === 'index') {
          check(await page.locator('tbody tr').count() === row.rows, where, `the index lists ${await page.locator('tbody tr').count()} reviews, not ${row.rows}`);
          await page.locator('tbody tr a').first().click();
          await page.waitForLoadState('load');
          check(await page.locator('#verdict').isVisible(), where, 'a link of the index does not open a review');
        }
        if (row.kind === 'hostile') await hostile(where, page, row);
        if (row.kind === 'thousand') {
          check(await page.locator('li.entry').count() === row.entries, where, 'not every entry is on the page');
          const size = fs.statSync(path.join(pagesDir, row.file)).size;
          const timing = await page.evaluate(() => {
            const navigation = performance.getEntriesByType('navigation')[0];
            return { parsed: Math.round(navigation.domInteractive), loaded: Math.round(navigation.loadEventEnd) };
          });
          console.log(`review page of a ${row.entries.toLocaleString('en')}-entry trace (${(size / 1048576).toFixed(1)} MiB of HTML): ` +
            `parsed in ${timing.parsed} ms, loaded in ${timing.loaded} ms after navigation start; ${opened.loadMs} ms for the whole navigation`);
        }
        // After the checks that need a clean page: axe injects a script.
        await accessible(where, page, row);
        // A second look: nothing in the page set the canary while it was used.
        check(await page.evaluate((canary) => typeof window[canary], CANARY) === 'undefined', where, 'a script ran while the page was used');
      } catch (error) {
        failures.push(`${where}: ${error.message.split('\n')[0]}`);
      }
      await page.close();
      const took = Date.now() - pageStarted;
      if (took > 3000) console.log(`${where}: checked in ${took} ms`);
    }
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  console.log(`review pages in Chromium: ${manifest.length} pages, ${checks} checks, ${failures.length} failed`);
  if (failures.length > 0) {
    for (const failure of failures) console.error(`FAILED ${failure}`);
    process.exit(1);
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
