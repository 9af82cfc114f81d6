import { createHash } from 'node:crypto';

/**
 * A tagged template that escapes every interpolated value unless it is already Html. Our own:
 * the pages are a handful of small server-rendered templates, not worth a template engine.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Fragment = Html | string | number | null | undefined | false | readonly Fragment[];

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function render(value: Fragment): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Fragment[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/**
 * A whole document, with the text of each of its style elements: the page's Content-Security-Policy
 * allows exactly those by their hashes, so no other inline style can apply.
 */
export class Page extends Html {
  constructor(
    text: string,
    readonly inlineStyles: readonly string[] = [],
  ) {
    super(text);
  }
}

/** The CSP sources (` 'sha256-…'` each, with a leading space) of the page's own style elements. */
export function inlineStyleSources(page: Page): string {
  return page.inlineStyles
    .map((css) => ` 'sha256-${createHash('sha256').update(css, 'utf8').digest('base64')}'`)
    .join('');
}
