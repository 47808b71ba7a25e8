// axe-core, the standard accessibility engine, run inside the page the browser tests are looking
// at: the rules of WCAG 2.x levels A and AA, and a failure for any violation whose impact is
// serious or critical (each printed with its rule, impact, help and the first elements it found).
//
// The console's Content-Security-Policy allows only its own origin's scripts ("script-src 'self'"),
// so axe cannot be added as an inline script (page.addScriptTag({ path }) inlines the file, and the
// page refuses it). Instead the page is given a route at its own origin that answers axe.min.js
// from node_modules, and the script is added by that URL: the policy stays as the service sends it.
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import * as assert from 'uvu/assert';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
/** A path the service does not serve: the test's route answers it before any request leaves. */
const axeRoute = '/__browser-test/axe.min.js';
const routed = new WeakSet<Page>();

interface AxeNode { target: unknown[]; failureSummary?: string }
interface AxeViolation { id: string; impact: string | null; help: string; nodes: AxeNode[] }

/**
 * A violation the page cannot fix because the markup is a third party's (Swagger UI's): the rule,
 * the elements it is known on (a CSS selector), and why it is not ours. Only that rule on those
 * elements is set aside, every other rule still checks them, and what is set aside is printed.
 */
export interface KnownViolation { rule: string; selector: string; why: string }

/** Impacts that fail a page. */
const failing = new Set(['serious', 'critical']);

/**
 * Every violation of WCAG 2 A/AA on the page as it is now, as readable lines: those that fail
 * (serious or critical), the others, and the known third-party ones set aside.
 */
export async function axeViolations(page: Page, known: KnownViolation[] = []): Promise<{ failures: string[]; minor: string[]; setAside: string[]; reloaded: boolean }> {
  if (!routed.has(page)) {
    routed.add(page);
    await page.route(`**${axeRoute}`, (route) => route.fulfill({ path: axePath, contentType: 'text/javascript; charset=utf-8' }));
  }
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ url: axeRoute });
  const { violations, setAside, reloaded } = await page.evaluate(async (known) => {
    type Node = { target: unknown[]; failureSummary?: string; element?: Element };
    type Violation = { id: string; impact: string | null; help: string; nodes: Node[] };
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Violation[] }> } }).axe;
    // Whether a part of the page was reloading (drawn faded) while axe read it.
    let reloaded = document.querySelector('[aria-busy="true"]') !== null;
    // (No named functions in here: the test runner's compiler would wrap them in a helper the page lacks.)
    const watch = new MutationObserver((changes) => {
      for (const change of changes) if ((change.target as Element).getAttribute('aria-busy') === 'true' || change.oldValue === 'true') reloaded = true;
    });
    watch.observe(document, { subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['aria-busy'] });
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] }, resultTypes: ['violations'], elementRef: true });
    for (const change of watch.takeRecords()) if ((change.target as Element).getAttribute('aria-busy') === 'true' || change.oldValue === 'true') reloaded = true;
    watch.disconnect();
    reloaded ||= document.querySelector('[aria-busy="true"]') !== null;
    const setAside: Record<string, number> = {};
    const violations = result.violations.map((violation) => ({
      id: violation.id, impact: violation.impact, help: violation.help,
      nodes: violation.nodes.filter((node) => {
        const match = known.find((entry) => entry.rule === violation.id && node.element?.matches(entry.selector));
        if (match) setAside[`${match.rule} on ${match.selector}`] = (setAside[`${match.rule} on ${match.selector}`] ?? 0) + 1;
        return !match;
      }).map((node) => ({ target: node.target, ...(node.failureSummary ? { failureSummary: node.failureSummary } : {}) })),
    })).filter((violation) => violation.nodes.length > 0);
    return { violations, setAside, reloaded };
  }, known.map(({ rule, selector }) => ({ rule, selector }))) as { violations: AxeViolation[]; setAside: Record<string, number>; reloaded: boolean };
  const describe = (violation: AxeViolation) => {
    const targets = violation.nodes.slice(0, 3).map((node) => `${node.target.join(' ')}${node.failureSummary ? ` (${node.failureSummary.replace(/\s+/g, ' ').slice(0, 240)})` : ''}`);
    return `${violation.id} [${violation.impact}] ${violation.help}: ${violation.nodes.length} element(s), e.g. ${targets.join('; ')}`;
  };
  return {
    failures: violations.filter((violation) => failing.has(violation.impact ?? '')).map(describe),
    minor: violations.filter((violation) => !failing.has(violation.impact ?? '')).map(describe),
    setAside: Object.entries(setAside).map(([what, n]) => `${what}: ${n} element(s), ${known.find(({ rule, selector }) => `${rule} on ${selector}` === what)?.why ?? ''}`),
    reloaded,
  };
}

/**
 * Fails on any serious or critical violation of WCAG 2 A/AA; `where` names the page in the
 * message. Lesser violations, and known third-party ones set aside, are printed, not hidden.
 */
export async function assertAccessible(page: Page, where: string, known: KnownViolation[] = []): Promise<void> {
  let { failures, minor, setAside, reloaded } = await axeViolations(page, known);
  if (failures.length > 0 && reloaded) {
    // A live page started reloading a part while axe read it (a late event after the page
    // settled): that part is drawn faded while busy, which axe reads as low contrast. It is
    // checked again once nothing is busy (said here): a real violation is still there then.
    console.log(`  axe, ${where}: read while a part reloaded, checked again once it had: ${failures.join(' | ')}`);
    const still = await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null, undefined, { timeout: 5_000 }).then(() => false, () => true);
    assert.not.ok(still, `a part of ${where} stayed busy for 5 s; axe found, while it was:\n  ${failures.join('\n  ')}`);
    ({ failures, minor, setAside } = await axeViolations(page, known));
  }
  if (minor.length > 0) console.log(`  axe, ${where}: minor or moderate (not failing): ${minor.join(' | ')}`);
  if (setAside.length > 0) console.log(`  axe, ${where}: third-party violations set aside: ${setAside.join('; ')}`);
  assert.equal(failures, [], `axe found serious or critical violations on ${where}:\n  ${failures.join('\n  ')}`);
}
