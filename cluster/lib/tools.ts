/**
 * The programs a loopback cluster runs besides Node (Debian packages of the same names), checked
 * before anything starts so a missing one is named with the command that installs it, rather
 * than surfacing as `spawn haproxy ENOENT` halfway through.
 */
import fs from 'node:fs';
import path from 'node:path';

export const CLUSTER_TOOLS = ['redis-server', 'haproxy'] as const;

/** Whether `bin` is an executable file in one of the PATH's directories. */
export function onPath(bin: string, pathEnv: string = process.env.PATH ?? ''): boolean {
  return pathEnv.split(path.delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      fs.accessSync(path.join(dir, bin), fs.constants.X_OK);
      return fs.statSync(path.join(dir, bin)).isFile();
    } catch {
      return false;
    }
  });
}

/** What to tell someone who lacks `bins`. */
export function installHint(bins: readonly string[]): string {
  return `${bins.join(' and ')} ${bins.length === 1 ? 'is' : 'are'} not installed (not found on PATH); install with: sudo apt-get install -y ${bins.join(' ')} (Debian and Ubuntu packages of the same name${bins.length === 1 ? '' : 's'}; .ci/run installs them for CI)`;
}

/** Throws naming every missing tool and how to install it. */
export function assertClusterTools(pathEnv: string = process.env.PATH ?? ''): void {
  const missing = CLUSTER_TOOLS.filter((bin) => !onPath(bin, pathEnv));
  if (missing.length > 0) throw new Error(`npm run cluster needs redis-server and haproxy: ${installHint(missing)}`);
}
