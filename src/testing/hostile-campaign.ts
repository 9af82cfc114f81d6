import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { type Operation, operationName } from './api-operations.js';
import { signUp, type TestServer } from './harness.js';
import { jsonOperators } from './hostile-body-operators.js';
import type { CaseContext, HostileCase } from './hostile-case.js';
import { pathOperators, queryOperators } from './hostile-url-operators.js';
import { wireOperators } from './hostile-wire-operators.js';
import { sendRaw, type WireRequest, type WireResponse } from './raw-request.js';
import { plausibleValue } from './schema-arbitrary.js';
import {
  changedTables,
  createSellerEstate,
  estateFields,
  estateIdFor,
  snapshotRows,
} from './seller-estate.js';

/**
 * Malformed and adversarial requests for every operation of a host's OpenAPI document, made by
 * fast-check from the operation's own schemas and a fixed set of mutation operators (wrong type,
 * missing and unknown fields, text past its limit, NUL, lone surrogates, deep nesting, bad ids,
 * bad query values, wrong content types, broken JSON, no Host...). Each operator applies to the
 * operations it fits and draws `casesPerOperator` cases per operation from a seed derived from
 * the operation's name, so a failure reproduces with the same seed.
 */

export interface Principal {
  name: string;
  token: string;
  /** Which auth requirements this principal meets (its token passes the door). */
  meets: readonly Operation['auth'][];
}

const OPERATORS = [...pathOperators, ...queryOperators, ...jsonOperators, ...wireOperators];

function seedOf(base: number, name: string): number {
  return (base ^ createHash('sha256').update(name).digest().readInt32BE(0)) | 0;
}

export interface CampaignOptions {
  operations: Operation[];
  principals: Principal[];
  /** Real ids for the path parameters of each operation. */
  pathValues(op: Operation): Record<string, string>;
  /** Named body fields pinned to real values (a product id, a license key). */
  fields: Record<string, unknown>;
  /** Users whose rows a refused request must leave alone. */
  watchedUsers: string[];
  casesPerOperator: number;
  seed: number;
  timeoutMs: number;
  /** Progress of long runs. */
  onOperation?(name: string, done: number, total: number): void;
}

export interface Finding {
  operation: string;
  principal: string;
  operator: string;
  problem: string;
  status: number;
  request: WireRequest;
  response: string;
  /** The campaign's seed: HOSTILE_SEED (with the same HOSTILE_CASES) sends this request again. */
  seed: number;
}

export interface CampaignReport {
  requests: number;
  byOperator: Record<string, number>;
  byStatus: Record<string, number>;
  findings: Finding[];
}

/** Sends every generated case to its host as each principal and collects what went wrong. */
export async function runHostileCampaign(
  server: TestServer,
  options: CampaignOptions,
): Promise<CampaignReport> {
  const report: CampaignReport = { requests: 0, byOperator: {}, byStatus: {}, findings: [] };
  const origin = (op: Operation) => (op.host === 'core' ? server.service.coreUrl : server.service.payUrl);
  // Deletions last, so the rows other operations address still exist while they are tried.
  const ordered = [...options.operations].sort(
    (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'),
  );
  let done = 0;
  // The watched rows as last read; only a write that was not refused can have moved them since.
  let known: Record<string, string> | null = null;
  for (const op of ordered) {
    const name = operationName(op);
    const seed = seedOf(options.seed, name);
    const pinned = Object.fromEntries(
      Object.entries(options.fields).map(([key, value]) => [key, fc.constant(value)]),
    );
    const ctx: CaseContext = {
      op,
      pathValues: options.pathValues(op),
      query: Object.fromEntries(
        op.query
          .filter((q) => q.required)
          .map((q) => [q.name, String(plausibleValue(q.schema, options.fields, q.name))]),
      ),
      // Every field present, so each is a place hostile values can go.
      body: op.body
        ? (plausibleValue(op.body.schema, options.fields, undefined, { everyField: true }) as Record<
            string,
            unknown
          >)
        : undefined,
      fields: pinned,
      // Pinned fields go in even when optional (a buyer's e-mail), so the plain body gets past the checks.
      plainBody: op.body
        ? {
            ...(plausibleValue(op.body.schema, options.fields) as Record<string, unknown>),
            ...Object.fromEntries(
              Object.entries(options.fields).filter(([name]) => name in (op.body?.schema.properties ?? {})),
            ),
          }
        : undefined,
    };
    const cases = OPERATORS.flatMap((operator, index) => {
      return [operator(ctx) ?? []]
        .flat()
        .flatMap((arbitrary, at) =>
          fc.sample(arbitrary, { seed: seed + index * 1000 + at, numRuns: options.casesPerOperator }),
        );
    });
    for (const principal of options.principals) {
      const admitted = op.auth === 'public' || principal.meets.includes(op.auth);
      for (const kase of cases) {
        const request: WireRequest = {
          ...kase.request,
          headers: {
            ...kase.request.headers,
            ...(op.host === 'core' && op.auth !== 'public'
              ? { authorization: `Bearer ${principal.token}` }
              : {}),
          },
        };
        const finding = (problem: string, status = 0, response = '') =>
          report.findings.push({
            operation: name,
            principal: principal.name,
            operator: kase.operator,
            problem,
            status,
            request,
            response: response.slice(0, 500),
            seed: options.seed,
          });
        const write = op.method !== 'GET';
        if (write && !kase.burst && !known) known = await snapshotRows(server.db, options.watchedUsers);
        const before = write && !kase.burst ? known : null;
        const answers = await Promise.all(
          Array.from({ length: kase.burst ?? 1 }, () =>
            sendRaw(origin(op), request, options.timeoutMs).catch((error: Error) => error),
          ),
        );
        for (const answer of answers) {
          if (answer instanceof Error) {
            finding(`no answer: ${answer.message}`);
            continue;
          }
          report.requests++;
          report.byOperator[kase.operator] = (report.byOperator[kase.operator] ?? 0) + 1;
          report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
          for (const problem of problemsOf(op, kase, answer, admitted))
            finding(problem, answer.status, answer.text);
        }
        const res = answers[0];
        // A declined payment (402) is an outcome, not a refusal: the attempt's order is recorded.
        if (before && !(res instanceof Error) && res && res.status >= 400 && res.status !== 402) {
          known = await snapshotRows(server.db, options.watchedUsers);
          const changed = changedTables(before, known);
          if (changed.length)
            finding(`refused with ${res.status} but changed ${changed.join(', ')}`, res.status, res.text);
        } else if (write) known = null;
      }
    }
    options.onOperation?.(name, ++done, ordered.length);
  }
  return report;
}

function problemsOf(op: Operation, kase: HostileCase, res: WireResponse, admitted: boolean): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`answered ${res.status}`);
  if (res.status >= 400) {
    const type = String(res.headers['content-type'] ?? '');
    if (type.startsWith('text/html') && op.responses[String(res.status)]?.includes('text/html')) {
      // A page the route declares for this status (the checkout pages).
    } else {
      let body: { error?: { code?: unknown; message?: unknown; requestId?: unknown } } | null = null;
      try {
        body = type.includes('application/json') ? JSON.parse(res.text) : null;
      } catch {}
      const error = body?.error;
      if (
        typeof error?.code !== 'string' ||
        typeof error.message !== 'string' ||
        typeof error.requestId !== 'string' ||
        error.requestId !== res.headers['x-request-id']
      ) {
        problems.push(`${res.status} not in the error body {"error":{"code","message","requestId"}}`);
      }
    }
  }
  const expected = kase.expect;
  if (admitted && expected) {
    let code: unknown;
    try {
      code = JSON.parse(res.text)?.error?.code;
    } catch {}
    if (res.status !== expected.status || (expected.code && code !== expected.code)) {
      problems.push(
        `expected ${expected.status}${expected.code ? ` ${expected.code}` : ''}, got ${res.status} ${String(code ?? '')}`,
      );
    }
  }
  return problems;
}

/** A finding as a reproducible request: how to send it again, and what came back. */
export function describeFinding(finding: Finding): string {
  const { request } = finding;
  const body =
    request.body === undefined
      ? ''
      : `\n  body (${Buffer.byteLength(request.body)} bytes): ${JSON.stringify(String(request.body).slice(0, 300))}${
          String(request.body).length > 300 ? '…' : ''
        }`;
  return [
    `${finding.operation} as ${finding.principal} [${finding.operator}, HOSTILE_SEED=${finding.seed}]: ${finding.problem}`,
    `  ${request.method} ${request.path.length > 300 ? `${request.path.slice(0, 300)}… (${request.path.length} chars)` : request.path}${request.omitHost ? ' (no Host header)' : ''}`,
    `  headers: ${JSON.stringify({ ...request.headers, ...(request.headers.authorization ? { authorization: 'Bearer …' } : {}) })}${body}`,
    `  answer: ${finding.status} ${finding.response.slice(0, 300)}`,
  ].join('\n');
}

/**
 * The campaign's cast on a test server: a seller with one of everything (path ids point to its
 * rows, body fields name them), an admin, and an account the admin routes address (so deleting
 * or promoting it leaves the seller alone). Refused requests must leave all three unchanged.
 */
export async function prepareHostileCampaign(
  server: TestServer,
  options: { webhookUrl: string; casesPerOperator: number; seed: number },
): Promise<Omit<CampaignOptions, 'operations'>> {
  const estate = await createSellerEstate(server, { webhookUrl: options.webhookUrl });
  const victim = await signUp(server);
  const adminToken = await server.adminToken();
  const admin = (await server.api.get('/auth/me', { token: adminToken })).expect(200).body.user;
  return {
    principals: [
      { name: 'seller', token: estate.seller.token, meets: ['seller', 'user'] },
      { name: 'admin', token: adminToken, meets: ['seller', 'user', 'admin'] },
    ],
    pathValues: (op) =>
      Object.fromEntries(
        op.pathParams.map((p) => [
          p.name,
          estateIdFor(estate, op.routeUrl, p.name, { userId: victim.user.id }),
        ]),
      ),
    fields: {
      ...estateFields(estate),
      url: options.webhookUrl,
      email: 'hostile-buyer@example.com',
      callback_secret: estate.secrets.callbackSecret,
    },
    watchedUsers: [estate.ids.userId, victim.user.id, admin.id],
    casesPerOperator: options.casesPerOperator,
    seed: options.seed,
    timeoutMs: 10_000,
  };
}
