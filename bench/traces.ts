// Placeholder until this benchmark lands.
import type { Row } from './harness.ts';

export async function run(): Promise<Row[]> {
  return [];
}
