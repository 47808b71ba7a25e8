// Scoring in process, on one core (this one): outputs scored per second with an eval spec of 10
// fields (enums, numbers, booleans, a text compared by similarity, a text that must not be empty)
// and a consistency rule, against its target; the same with printed (JSON text) outputs, and the
// simple scorers, reported only. Each figure is the median of a few timed rounds over 1,000
// distinct outputs, after a warm-up round.
import { compileScorers, type ScorersConfig } from '../src/scoring/scorers.ts';
import { scoreWithSpec, type EvalSpecLike } from '../src/scoring/spec-score.ts';
import { median, quick, type Row } from './harness.ts';

const outputsPerSecondMin = 50_000;
const outputCount = 1000;
const rounds = quick ? 3 : 5;
const roundMs = quick ? 300 : 1000;

const spec: EvalSpecLike = {
  output_fields: {
    category: { type: 'enum', values: ['billing', 'technical', 'account', 'other'], weight: 15, importance: 'critical', partial_credit: true },
    priority: { type: 'enum', values: ['urgent', 'high', 'normal', 'low'], weight: 10 },
    channel: { type: 'enum', values: ['email', 'chat', 'phone'], weight: 5, importance: 'minor' },
    risk_score: { type: 'number', weight: 10, range: [0, 100], tolerance: 10 },
    refund_amount: { type: 'number', weight: 10, tolerance_bands: [{ within: 1, score_pct: 1 }, { within: 10, score_pct: 0.5 }] },
    wait_days: { type: 'number', weight: 5, tolerance: 2 },
    escalate: { type: 'boolean', weight: 5 },
    vip: { type: 'boolean', weight: 5, importance: 'minor' },
    summary: { type: 'text', weight: 10, eval_mode: 'similarity' },
    reply: { type: 'text', weight: 5 },
  },
  structure_weight: 10,
  tool_config: {},
  tool_usage_weight: 10,
  consistency_rules: [{ field_a: 'risk_score', field_b: 'priority', type: 'correlation', penalty: 3 }],
};

const words = ['customer', 'charged', 'twice', 'invoice', 'refund', 'card', 'account', 'locked', 'password', 'reset', 'shipping', 'delayed'];

function text(i: number, length: number): string {
  return Array.from({ length }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ');
}

function ticket(i: number): Record<string, unknown> {
  return {
    category: ['billing', 'technical', 'account', 'other'][i % 4],
    priority: ['urgent', 'high', 'normal', 'low'][(i >> 2) % 4],
    channel: ['email', 'chat', 'phone'][i % 3],
    risk_score: (i * 37) % 101,
    refund_amount: ((i * 13) % 200) + 0.5,
    wait_days: i % 9,
    escalate: i % 2 === 0,
    vip: i % 5 === 0,
    summary: text(i, 8 + (i % 6)),
    reply: text(i + 1, 20),
  };
}

const expected = Array.from({ length: outputCount }, (_, i) => ticket(i));
const outputs = Array.from({ length: outputCount }, (_, i) => ticket(i % 3 === 0 ? i : i + 1));
const printed = outputs.map((output, i) => (i % 2 === 0 ? JSON.stringify(output) : `Here is the ticket:\n\`\`\`json\n${JSON.stringify(output, null, 2)}\n\`\`\``));

const scorers: ScorersConfig = {
  method: 'scorers',
  scorers: [
    { type: 'json_fields', name: 'fields' },
    { type: 'contains', name: 'category', value: 'billing', case_insensitive: true },
    { type: 'regex', name: 'amount', pattern: '"refund_amount":\\d+(\\.\\d+)?' },
    { type: 'numeric', name: 'risk', field: 'risk_score', abs_tolerance: 5 },
    { type: 'similarity', name: 'similar' },
  ],
};

/** Scores per second of `score` over the outputs: the median of `rounds` timed rounds after a warm-up. */
function rate(score: (i: number) => unknown): number {
  const rates: number[] = [];
  for (let round = -1; round < rounds; round++) {
    let scored = 0;
    const started = performance.now();
    let elapsed = 0;
    while (elapsed < roundMs) {
      for (let i = 0; i < outputCount; i++) score(i);
      scored += outputCount;
      elapsed = performance.now() - started;
    }
    if (round >= 0) rates.push((scored / elapsed) * 1000);
  }
  return median(rates);
}

export async function scoringRows(): Promise<Row[]> {
  const objects = rate((i) => scoreWithSpec(spec, outputs[i], expected[i], null));
  const texts = rate((i) => scoreWithSpec(spec, printed[i], expected[i], null));
  const simple = compileScorers(scorers, {});
  const simpleRate = rate((i) => simple(outputs[i], expected[i]));
  const perSecond = (value: number) => Math.round(value);
  return [
    {
      name: 'spec scoring, 10-field spec, object outputs (one core)',
      value: perSecond(objects),
      unit: 'outputs/s',
      target: `>= ${outputsPerSecondMin.toLocaleString('en-US')} outputs/s`,
      pass: objects >= outputsPerSecondMin,
      note: `median of ${rounds} rounds`,
    },
    { name: 'spec scoring, the same as printed JSON text', value: perSecond(texts), unit: 'outputs/s', target: 'report only', pass: true },
    { name: 'simple scorers (json_fields, contains, regex, numeric, similarity)', value: perSecond(simpleRate), unit: 'outputs/s', target: 'report only', pass: true },
  ];
}
