// What one synced commit of the store costs on the service's core, each way lmdb-js can write it
// (bench/store-commit-child.ts says what a commit holds and what each way is): the CPU of every
// thread and the time per commit, the median of alternating rounds. Reported, no targets: it is
// the floor under every durable answer, and with one task a lease the service makes about one
// such commit for every four tasks (docs/PERFORMANCE.md).
import { median, quick, rounds, startLineChild, type Row } from './harness.ts';

const ways = ['service', 'callback', 'puts', 'blocking', 'thread'] as const;
const commitsPerRound = quick ? 300 : 1500;
const described: Record<(typeof ways)[number], string> = {
  service: 'as the service writes (a child transaction)',
  callback: 'a transaction callback, no child',
  puts: 'puts made at once, no callback',
  blocking: 'synchronous, holding the event loop',
  thread: 'synchronous, on a writer thread of its own',
};

export async function run(): Promise<Row[]> {
  const child = await startLineChild(['bench/store-commit-child.ts'], { onServerCore: true });
  const measured = new Map<string, { cpu: number[]; wall: number[] }>(ways.map((way) => [way, { cpu: [], wall: [] }]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const way of ways) {
        child.send(`${way} ${commitsPerRound}`);
        const { cpuMicros, wallMicros } = JSON.parse(await child.next()) as { cpuMicros: number; wallMicros: number };
        measured.get(way)!.cpu.push(cpuMicros);
        measured.get(way)!.wall.push(wallMicros);
      }
    }
  } finally {
    await child.end();
  }
  return ways.map((way) => {
    const { cpu, wall } = measured.get(way)!;
    return {
      name: `a synced commit (21 puts, 21 removals), ${described[way]}: CPU`,
      value: median(cpu),
      unit: 'us',
      target: 'reported',
      pass: true,
      note: `every thread; ${median(wall).toFixed(0)} us a commit; rounds ${cpu.map((value) => value.toFixed(0)).join('/')} us CPU`,
    };
  });
}
