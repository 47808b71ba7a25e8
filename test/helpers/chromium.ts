// Headless Chromium for the browser tests: Debian's chromium package (or CHROMIUM_PATH), driven by
// playwright-core, with no network of its own (this machine has none, and the pages must need none).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserTimeoutMs = 30_000;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium is not installed at ${executablePath}: install Debian's chromium package (apt-get install chromium), or set CHROMIUM_PATH to a Chromium binary.`);
  }
  try {
    return await chromium.launch({
      executablePath,
      timeout: browserTimeoutMs,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (error) {
    throw new Error(`Chromium at ${executablePath} did not start (install Debian's chromium package, or set CHROMIUM_PATH): ${(error as Error).message}`);
  }
}
