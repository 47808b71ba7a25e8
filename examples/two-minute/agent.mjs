#!/usr/bin/env node
// The example agent: a support-ticket triager with no model and no network. It reads the task
// the worker command hands it (JSON on standard input: the datapoint's `input`) and its rules
// from the candidate's agent_code (the file OVERMIND_AGENT_CODE_FILE names), and prints its
// answer as JSON: {"category": ..., "urgent": ...}. Each candidate is a set of rules; the
// baseline's are deliberately thin (one keyword per category, "urgent" the only urgent word).
import { readFileSync } from 'node:fs';

const task = JSON.parse(readFileSync(0, 'utf8'));
const rules = JSON.parse(readFileSync(process.env.OVERMIND_AGENT_CODE_FILE, 'utf8'));
const text = String(task.input?.text ?? '').toLowerCase();

/** The category whose keywords occur most often (the first listed wins a tie), else the fallback. */
function categoryOf() {
  let best = rules.fallback;
  let bestHits = 0;
  for (const [category, keywords] of Object.entries(rules.categories)) {
    const hits = keywords.filter((keyword) => text.includes(keyword)).length;
    if (hits > bestHits) [best, bestHits] = [category, hits];
  }
  return best;
}

const urgent = rules.urgent.some((word) => text.includes(word));
process.stdout.write(JSON.stringify({ category: categoryOf(), urgent }) + '\n');
