/**
 * Path router over the route table: a trie of path segments, static segments before parameters,
 * with backtracking. Distinguishes "no such path" (404) from "path exists, other methods" (405).
 */
import type { AnyRoute, Method } from '../api/route.ts';

interface Node {
  statics: Map<string, Node>;
  param: { name: string; node: Node } | null;
  routes: Map<Method, AnyRoute>;
}

export type Match =
  | { kind: 'found'; route: AnyRoute; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: Method[]; routes: AnyRoute[] }
  | { kind: 'not_found' };

const newNode = (): Node => ({ statics: new Map(), param: null, routes: new Map() });

/** Matches of recent concrete paths, so hot paths skip the walk (bounded; cleared when full). */
const MATCH_CACHE_SIZE = 10_000;
/**
 * Longer paths are matched but not cached, so the cache holds at most ~10 MB however long the
 * paths clients send (a route's longest real path, ids of 128 characters, is under 600).
 */
const MATCH_CACHE_MAX_PATH = 1024;

export class Router {
  private readonly root = newNode();
  private readonly cache = new Map<string, Map<string, Match>>();
  private cached = 0;

  constructor(routes: readonly AnyRoute[]) {
    for (const r of routes) this.add(r);
  }

  /** Paths in the match cache now. */
  get cachedPaths(): number {
    return this.cached;
  }

  private add(route: AnyRoute): void {
    let node = this.root;
    for (const seg of split(route.path)) {
      const m = /^\{([a-z_]+)\}$/.exec(seg);
      if (m) {
        const name = m[1] as string;
        if (node.param && node.param.name !== name) {
          throw new Error(`route ${route.path}: parameter {${name}} conflicts with {${node.param.name}}`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    node.routes.set(route.method, route);
  }

  /** Every route on this path, whatever its method (for CORS preflight). */
  at(path: string): AnyRoute[] {
    const node = walk(this.root, split(path), 0, []);
    return node ? [...node.routes.values()] : [];
  }

  /** `path` is relative to the API prefix and not decoded; parameters are percent-decoded here. */
  match(method: string, path: string): Match {
    let byPath = this.cache.get(method);
    if (byPath === undefined) this.cache.set(method, (byPath = new Map()));
    const hit = byPath.get(path);
    if (hit !== undefined) return hit;
    const m = this.resolve(method, path);
    if (path.length > MATCH_CACHE_MAX_PATH) return m;
    if (++this.cached > MATCH_CACHE_SIZE) {
      this.cache.clear();
      this.cached = 1;
      this.cache.set(method, (byPath = new Map()));
    }
    byPath.set(path, m);
    return m;
  }

  private resolve(method: string, path: string): Match {
    const segs = split(path);
    const params: string[] = [];
    const node = walk(this.root, segs, 0, params);
    if (node === null) return { kind: 'not_found' };
    const route = node.routes.get(method as Method);
    if (route === undefined) {
      return { kind: 'method_not_allowed', allowed: [...node.routes.keys()], routes: [...node.routes.values()] };
    }
    const names = paramNames(route.path);
    const out: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      try {
        out[names[i] as string] = decodeURIComponent(params[i] as string);
      } catch {
        return { kind: 'not_found' };
      }
    }
    return { kind: 'found', route, params: Object.freeze(out) };
  }
}

function walk(node: Node, segs: string[], i: number, params: string[]): Node | null {
  if (i === segs.length) return node.routes.size > 0 ? node : null;
  const seg = segs[i] as string;
  const s = node.statics.get(seg);
  if (s) {
    const found = walk(s, segs, i + 1, params);
    if (found) return found;
  }
  if (node.param && seg !== '') {
    params.push(seg);
    const found = walk(node.param.node, segs, i + 1, params);
    if (found) return found;
    params.pop();
  }
  return null;
}

const paramCache = new Map<string, string[]>();
function paramNames(template: string): string[] {
  let names = paramCache.get(template);
  if (!names) {
    names = split(template).flatMap((s) => (/^\{([a-z_]+)\}$/.exec(s)?.[1] ? [s.slice(1, -1)] : []));
    paramCache.set(template, names);
  }
  return names;
}

function split(path: string): string[] {
  const trimmed = path.startsWith('/') ? path.slice(1) : path;
  return trimmed === '' ? [] : trimmed.split('/');
}
