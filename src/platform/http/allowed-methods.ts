/**
 * The methods each path of a host answers, for the `Allow` header of a 405: a request whose path
 * is a route's but whose method is not answers 405 `method_not_allowed` naming the methods that
 * path has, instead of 404 `route_not_found`. Filled from every route as it is registered, HEAD
 * routes included (Fastify gives every GET route one) and the CORS preflights (OPTIONS). Read only
 * when no route matched, so it costs the routed requests nothing.
 */

/** The order `Allow` lists methods in: reads, writes, then the preflight. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface PathPattern {
  matches: RegExp;
  methods: Set<string>;
}

export class AllowedMethods {
  private readonly byUrl = new Map<string, PathPattern>();

  /** A route's url as the router spells it (`/v1/apps/:appId`) and its methods. */
  add(url: string, methods: readonly string[]): void {
    let pattern = this.byUrl.get(url);
    if (!pattern) {
      pattern = { matches: patternOf(url), methods: new Set() };
      this.byUrl.set(url, pattern);
    }
    for (const method of methods) pattern.methods.add(method);
  }

  /**
   * The methods some route answers on this request path (as sent, without the query), in
   * METHOD_ORDER; empty when no route has the path. Two patterns may match one path (a static
   * segment and a parameter): the router tries both, so their methods add up.
   */
  at(path: string): string[] {
    const decoded = decodedPath(path);
    if (decoded === null) return [];
    const found = new Set<string>();
    for (const { matches, methods } of this.byUrl.values()) {
      if (matches.test(decoded)) for (const method of methods) found.add(method);
    }
    return [...found].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  }
}

const rank = (method: string) => {
  const index = METHOD_ORDER.indexOf(method);
  return index === -1 ? METHOD_ORDER.length : index;
};

/** `:name` stands for one non-empty segment, `*` for the rest of the path; the router ignores a trailing slash. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':')
        ? '[^/]+'
        : segment === '*'
          ? '.*'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/** The path as the router compares it: percent-decoded except for reserved characters (a `%2F` stays). */
function decodedPath(path: string): string | null {
  try {
    return decodeURI(path);
  } catch {
    return null;
  }
}
