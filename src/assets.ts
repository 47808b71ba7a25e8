// Where the files the service reads at run time are: the JSON Schemas, the OTLP .proto files, the
// console's browser files and package.json. They are found from the package's root, so the same
// code serves from src/ (under tsx, in tests) and compiled under dist/ (npm start).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding package.json, above this module wherever it was compiled to. */
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

export const schemasDir = join(packageRoot, 'schemas');
export const protoDir = join(packageRoot, 'src/traces/proto');
export const consoleDir = join(packageRoot, 'src/console');

export const packageVersion = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
