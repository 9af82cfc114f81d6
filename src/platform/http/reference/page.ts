import { createHash } from 'node:crypto';

/**
 * The API reference as one server-rendered HTML page: readable without JavaScript (there is
 * none), nothing fetched from another host, its only stylesheet inline and allowed by hash.
 */

interface Schema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  $ref?: string;
  [constraint: string]: unknown;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface MediaTypes {
  [mediaType: string]: { schema?: Schema };
}

interface Operation {
  summary?: string;
  description?: string;
  operationId?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: MediaTypes };
  responses?: Record<
    string,
    { description?: string; content?: MediaTypes; headers?: Record<string, unknown> }
  >;
  'x-auth'?: string;
  /** Its own server: a route outside the document's base address (at the host's root). */
  servers?: { url: string }[];
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  /** What the host sends to its users' endpoints, one Path Item per kind of event. */
  webhooks?: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, Schema>;
    securitySchemes?: Record<string, { description?: string }>;
  };
}

const STYLE = `
:root{color-scheme:light;--ink:#1b1f24;--muted:#4d5560;--line:#d5d9de;--soft:#f4f6f8;--accent:#0b5cad}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:#fff}
a{color:var(--accent)}
a:focus-visible,summary:focus-visible,main:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
code{font:0.9em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5em 1em;z-index:1}
.skip:focus{left:1em}
header{padding:1.5rem 2rem;border-bottom:1px solid var(--line);background:var(--soft)}
header h1{margin:0 0 .25rem;font-size:1.6rem}
header p{margin:.25rem 0;color:var(--muted)}
.layout{display:grid;grid-template-columns:minmax(14rem,20rem) 1fr}
nav{border-right:1px solid var(--line);padding:1rem 1.25rem;position:sticky;top:0;max-height:100vh;overflow:auto;font-size:.9rem}
nav h2{font-size:1rem;margin:.5rem 0}
nav ul{list-style:none;margin:0;padding:0}
nav li{margin:.15rem 0;overflow-wrap:anywhere}
nav ul ul{padding-left:.75rem;margin-bottom:.5rem}
main{padding:1rem 2rem 4rem;min-width:0}
section{margin-top:1.5rem}
section>h2{border-bottom:2px solid var(--line);padding-bottom:.25rem}
article{border:1px solid var(--line);border-radius:6px;padding:1rem 1.25rem;margin:1rem 0}
article h3{margin:0;font-size:1.05rem;display:flex;gap:.6rem;align-items:baseline;flex-wrap:wrap}
article h4{margin:1rem 0 .25rem;font-size:.95rem}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;padding:0 .4rem;font:600 .8rem/1.6 ui-monospace,monospace;color:#fff;background:#444}
.m-get{background:#1a6b3c}.m-post{background:#0b5cad}.m-put{background:#7a4b00}.m-patch{background:#6a3d9a}.m-delete{background:#a12a2a}.m-options{background:#4d5560}
.summary{margin:.4rem 0 0;font-weight:600}
.auth{margin:.4rem 0;padding:.25rem .6rem;background:var(--soft);border-left:4px solid var(--accent)}
.desc{white-space:pre-line;color:var(--muted)}
table{border-collapse:collapse;width:100%;font-size:.9rem}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft)}
details{border:1px solid var(--line);border-radius:4px;margin:.35rem 0;padding:.25rem .6rem}
summary{cursor:pointer}
ul.schema{margin:.25rem 0;padding-left:1.1rem;font-size:.9rem}
ul.schema li{margin:.15rem 0}
.type{color:#7a4b00}
.req{color:#a12a2a;font-size:.8rem}
.notes{color:var(--muted)}
@media (max-width:50rem){.layout{display:block}nav{position:static;max-height:none;border-right:0;border-bottom:1px solid var(--line)}}
`;

/** Strict: the inline stylesheet above and the host's favicon; no scripts, frames or form targets. */
export const PAGE_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** `code` spans in descriptions (Markdown's backticks) become <code>; everything else is text. */
function prose(text: string | undefined): string {
  if (!text) return '';
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

const anchorOf = (method: string, path: string) =>
  `op-${method}-${path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
const tagAnchor = (tag: string) => `tag-${tag.replace(/[^A-Za-z0-9]+/g, '-')}`;
const webhookAnchor = (name: string) => `webhook-${name.replace(/[^A-Za-z0-9]+/g, '-')}`;

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options'] as const;
const MAX_DEPTH = 8;

export function renderReferencePage(doc: OpenApiDocument, options: { documentPath: string }): string {
  const resolve = (schema: Schema | undefined, depth = 0): Schema => {
    if (!schema?.$ref || depth > MAX_DEPTH) return schema ?? {};
    const name = schema.$ref.replace('#/components/schemas/', '');
    return resolve(doc.components?.schemas?.[name], depth + 1);
  };

  function typeLabel(raw: Schema): string {
    const schema = resolve(raw);
    if (schema.const !== undefined) return `= ${JSON.stringify(schema.const)}`;
    const union = schema.anyOf ?? schema.oneOf;
    if (union) return union.map((member) => typeLabel(member)).join(' or ');
    const inferred = schema.enum
      ? [...new Set(schema.enum.map((value) => (value === null ? 'null' : typeof value)))]
      : schema.properties
        ? 'object'
        : 'any';
    const types = [schema.type ?? inferred].flat();
    return types
      .map((type) => {
        if (type === 'array' && schema.items) return `array of ${typeLabel(schema.items)}`;
        return schema.format && type !== 'null' ? `${type} (${schema.format})` : type;
      })
      .join(' or ');
  }

  function constraints(schema: Schema): string[] {
    const notes: string[] = [];
    if (schema.enum) notes.push(`one of ${schema.enum.map((value) => `\`${String(value)}\``).join(', ')}`);
    for (const [key, label] of [
      ['minLength', 'min length'],
      ['maxLength', 'max length'],
      ['minimum', 'min'],
      ['maximum', 'max'],
      ['minItems', 'min items'],
      ['maxItems', 'max items'],
      ['pattern', 'pattern'],
      ['default', 'default'],
    ] as const) {
      if (schema[key] !== undefined) notes.push(`${label} \`${String(schema[key])}\``);
    }
    return notes;
  }

  /** Nested fields of an object, the items of an array of objects, or the members of a union. */
  function children(raw: Schema, depth: number): string {
    const schema = resolve(raw);
    if (depth > MAX_DEPTH) return '';
    const union = schema.anyOf ?? schema.oneOf;
    if (union?.some((member) => resolve(member).properties)) {
      return `<ul class="schema">${union
        .map(
          (member, i) =>
            `<li>Variant ${i + 1}: <span class="type">${escapeHtml(typeLabel(member))}</span>${children(member, depth + 1)}</li>`,
        )
        .join('')}</ul>`;
    }
    if (schema.items) return children(schema.items, depth + 1);
    if (!schema.properties) return '';
    const required = new Set(schema.required ?? []);
    const items = Object.entries(schema.properties).map(([name, child]) => {
      const resolved = resolve(child);
      const notes = [resolved.description, ...constraints(resolved)].filter(Boolean).join('; ');
      return `<li><code>${escapeHtml(name)}</code> <span class="type">${escapeHtml(typeLabel(child))}</span>${
        required.has(name) ? ' <span class="req">required</span>' : ''
      }${notes ? ` <span class="notes">— ${prose(notes)}</span>` : ''}${children(child, depth + 1)}</li>`;
    });
    return `<ul class="schema">${items.join('')}</ul>`;
  }

  function body(content: MediaTypes | undefined): string {
    return Object.entries(content ?? {})
      .map(([mediaType, media]) => {
        const schema = resolve(media.schema);
        const shape = children(schema, 0);
        return `<p><code>${escapeHtml(mediaType)}</code>: <span class="type">${escapeHtml(typeLabel(schema))}</span></p>${shape}`;
      })
      .join('');
  }

  function parameters(list: Parameter[] | undefined, caption = 'Parameters'): string {
    if (!list?.length) return '';
    const rows = list.map((parameter) => {
      const schema = resolve(parameter.schema);
      const notes = [parameter.description ?? schema.description, ...constraints(schema)]
        .filter(Boolean)
        .join('; ');
      return `<tr><th scope="row"><code>${escapeHtml(parameter.name)}</code></th><td>${escapeHtml(parameter.in)}</td><td class="type">${escapeHtml(
        typeLabel(schema),
      )}</td><td>${parameter.required ? 'yes' : 'no'}</td><td>${prose(notes)}</td></tr>`;
    });
    return `<table><caption>${escapeHtml(caption)}</caption><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }

  function operation(method: string, path: string, op: Operation): string {
    const id = anchorOf(method, path);
    const entries = Object.entries(op.responses ?? {});
    // Successes show their shape; failures all share the error body, so they list their codes.
    const successes = entries
      .filter(([status]) => !/^[45]/.test(status))
      .map(([status, response]) => {
        const location = response.headers?.location
          ? '<p>Header <code>Location</code>: where to go next.</p>'
          : '';
        const content = response.content ? body(response.content) : '<p>No body.</p>';
        const media = Object.keys(response.content ?? {}).join(', ') || 'no body';
        return `<details><summary><strong>${escapeHtml(status)}</strong> — ${prose(response.description)} <span class="notes">(${escapeHtml(media)})</span></summary>${location}${content}</details>`;
      });
    const failures = entries
      .filter(([status]) => /^[45]/.test(status))
      .map(([status, response]) => {
        const media = Object.keys(response.content ?? {}).map((type) => `<code>${escapeHtml(type)}</code>`);
        // A page's failure that may also be the error body: say which codes that body carries.
        const codes = response.content?.['application/json']?.schema?.description;
        const when =
          codes && codes !== response.description
            ? `${response.description}. Error body: ${codes}`
            : response.description;
        return `<tr><th scope="row">${escapeHtml(status)}</th><td>${prose(when)}</td><td>${media.join(', ')}</td></tr>`;
      });
    const responses = [
      ...successes,
      failures.length
        ? `<table><caption>Failures</caption><thead><tr><th scope="col">Status</th><th scope="col">Codes and when</th><th scope="col">Body</th></tr></thead><tbody>${failures.join('')}</tbody></table>`
        : '',
    ];
    const description = (op.description ?? '').split('\n\n');
    // The last paragraph is the auth statement the document adds to every operation.
    const auth = description.pop();
    return `<article id="${id}" aria-labelledby="${id}-h">
<h3 id="${id}-h"><span class="method m-${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${prose(op.summary)}</p>
${op.servers?.[0] ? `<p class="notes">At the host’s root: <code>${escapeHtml(op.servers[0].url + path)}</code></p>` : ''}
${description.length ? `<p class="desc">${prose(description.join('\n\n'))}</p>` : ''}
<p class="auth">${prose(auth)}</p>
${parameters(op.parameters)}
${op.requestBody ? `<h4>Request body</h4>${body(op.requestBody.content)}` : ''}
<h4>Responses</h4>
${responses.join('\n')}
</article>`;
  }

  /** A delivery the host sends, under the event's name: when, and its body (expand it, as a response). */
  function webhook(name: string, op: Operation): string {
    const id = webhookAnchor(name);
    return `<article id="${id}" aria-labelledby="${id}-h">
<h3 id="${id}-h"><span class="method m-post">POST</span> <code>${escapeHtml(name)}</code></h3>
<p class="summary">${prose(op.summary)}</p>
${op.requestBody ? `<details><summary><strong>Body</strong> <span class="notes">(application/json)</span></summary>${body(op.requestBody.content)}</details>` : ''}
</article>`;
  }

  /** What every delivery shares (how it is sent, its headers), said once before the events. */
  function webhooksPreamble(first: Operation | undefined): string {
    if (!first) return '';
    return `${first.description ? `<p>${prose(first.description)}</p>` : ''}${parameters(first.parameters, 'Headers of every delivery')}`;
  }

  const webhooks = Object.entries(doc.webhooks ?? {}).flatMap(([name, item]) =>
    item.post ? [{ name, op: item.post }] : [],
  );
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      method,
      path,
      op: item[method] as Operation,
    })),
  );
  const tags = (doc.tags ?? []).map((tag) => ({
    ...tag,
    operations: operations.filter(({ op }) => (op.tags?.[0] ?? 'other') === tag.name),
    webhooks: webhooks.filter(({ op }) => op.tags?.[0] === tag.name),
  }));
  const untagged = operations.filter(({ op }) => !op.tags?.length);
  if (untagged.length) tags.push({ name: 'other', operations: untagged, webhooks: [] });

  const nav = tags
    .map(
      (tag) =>
        `<li><a href="#${tagAnchor(tag.name)}">${escapeHtml(tag.name)}</a><ul>${tag.operations
          .map(
            ({ method, path }) =>
              `<li><a href="#${anchorOf(method, path)}">${method.toUpperCase()} ${escapeHtml(path)}</a></li>`,
          )
          .join('')}${tag.webhooks
          .map(({ name }) => `<li><a href="#${webhookAnchor(name)}">${escapeHtml(name)}</a></li>`)
          .join('')}</ul></li>`,
    )
    .join('');
  const sections = tags
    .map(
      (tag) => `<section id="${tagAnchor(tag.name)}" aria-labelledby="${tagAnchor(tag.name)}-h">
<h2 id="${tagAnchor(tag.name)}-h">${escapeHtml(tag.name)}</h2>
${tag.description ? `<p>${prose(tag.description)}</p>` : ''}
${tag.operations.map(({ method, path, op }) => operation(method, path, op)).join('\n')}
${webhooksPreamble(tag.webhooks[0]?.op)}
${tag.webhooks.map(({ name, op }) => webhook(name, op)).join('\n')}
</section>`,
    )
    .join('\n');
  const security = Object.values(doc.components?.securitySchemes ?? {})
    .map((scheme) => `<p>${prose(scheme.description)}</p>`)
    .join('');
  const server = doc.servers?.[0]?.url ?? '';

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.info.title)} — API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>${STYLE}</style>
</head>
<body>
<a class="skip" href="#operations">Skip to the operations</a>
<header>
<h1>${escapeHtml(doc.info.title)}</h1>
<p>${prose(doc.info.description)}</p>
<p>Version ${escapeHtml(doc.info.version)} · OpenAPI ${escapeHtml(doc.openapi)} · paths are relative to <code>${escapeHtml(server)}</code> · <a href="${escapeHtml(options.documentPath)}">the OpenAPI document (JSON)</a></p>
</header>
<div class="layout">
<nav aria-label="Contents">
<h2>Contents</h2>
<ul><li><a href="#authentication">Authentication</a></li><li><a href="#errors">Errors</a></li>${nav}</ul>
</nav>
<main id="operations" tabindex="-1">
<section id="authentication" aria-labelledby="authentication-h">
<h2 id="authentication-h">Authentication</h2>
${security || '<p>No credentials: every route of this host is public.</p>'}
</section>
<section id="errors" aria-labelledby="errors-h">
<h2 id="errors-h">Errors</h2>
<p>Every 4xx and 5xx answer has one body: <code>{"error":{"code","message","details"?,"requestId"}}</code>. Each operation lists, per status, the <code>code</code> values it can answer and when; <code>details</code> names each offending field of a validation failure, and <code>requestId</code> equals the <code>x-request-id</code> header.</p>
</section>
${sections}
</main>
</div>
</body>
</html>
`;
}
